import { useEffect, useState } from 'react';
import { api } from '../api/client';
import { errorText } from '../ui/kit';

/** A key's use of memory in conversations (`GET|PUT /api/memory/keys/{keyId}/settings`, docs/memory.md). */
interface MemoryUse {
  inject: boolean;
  extract: boolean;
}

/**
 * The memory switches of a key's edit form: loaded when the form opens, saved with it (only when changed).
 * `save` throws the daemon's error so the form shows it like its other ones.
 */
export function useKeyMemory(keyId: string, open: boolean) {
  const [stored, setStored] = useState<MemoryUse>();
  const [draft, setDraft] = useState<MemoryUse>();
  const [error, setError] = useState<string>();
  useEffect(() => {
    if (!open) return;
    let live = true;
    setError(undefined);
    api('GET /api/memory/keys/{keyId}/settings', { params: { keyId } }).then(
      (r) => {
        if (!live) return;
        const use = { inject: Boolean((r as MemoryUse).inject), extract: Boolean((r as MemoryUse).extract) };
        setStored(use);
        setDraft(use);
      },
      (e: unknown) => live && setError(errorText(e)),
    );
    return () => {
      live = false;
    };
  }, [keyId, open]);
  const save = async () => {
    if (!draft || !stored || (draft.inject === stored.inject && draft.extract === stored.extract)) return;
    const r = (await api('PUT /api/memory/keys/{keyId}/settings', { params: { keyId }, body: draft })) as MemoryUse;
    setStored({ inject: r.inject, extract: r.extract });
  };
  return { draft, setDraft, error, save };
}

/** The two switches, as a fieldset of the edit form. */
export function KeyMemoryFields({ mem }: { mem: ReturnType<typeof useKeyMemory> }) {
  const { draft, setDraft, error } = mem;
  return (
    <fieldset>
      <legend>Memory</legend>
      {error ? (
        <p className="error" role="alert">
          {error}
        </p>
      ) : null}
      <label className="check">
        <input type="checkbox" disabled={!draft} checked={draft?.inject ?? false} onChange={(e) => draft && setDraft({ ...draft, inject: e.target.checked })} /> Inject
        relevant memories into this key's conversations
      </label>
      <label className="check">
        <input type="checkbox" disabled={!draft} checked={draft?.extract ?? false} onChange={(e) => draft && setDraft({ ...draft, extract: e.target.checked })} /> Extract
        new memories from this key's conversations
      </label>
    </fieldset>
  );
}
