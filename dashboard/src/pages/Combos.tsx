import { useState } from 'react';
import { api } from '../api/client';
import type { ComboRecord } from '../api/replies';
import type { Routes } from '../../../src/shared/api/contract';
import { Empty, ErrorBox, Field, fieldError, Section, useAction, useData, ok } from '../ui/kit';

import { COMBO_AFFINITIES, COMBO_STRATEGIES, MID_STREAM_RECOVERIES } from '../../../src/shared/records';

const STRATEGIES = COMBO_STRATEGIES;
const AFFINITIES = COMBO_AFFINITIES;
/** 'off' is the form's word for no recovery (null on the wire). */
const RECOVERIES = ['off', ...MID_STREAM_RECOVERIES] as const;
type Body = Routes['POST /api/combos']['body'];

/** Combos: list, create and edit (targets, weights, strategy, timeout) with the daemon's validation inline. */
export function Combos() {
  const combos = useData(() => api('GET /api/combos'));
  const logs = useData(() => api('GET /api/logs', { query: { limit: 200 } }));
  const [editing, setEditing] = useState<ComboRecord | 'new'>();
  const served = (name: string) => {
    const counts = new Map<string, number>();
    for (const l of logs.data?.logs ?? []) if (l.combo === name && l.status < 400) counts.set(`${l.provider}/${l.model}`, (counts.get(`${l.provider}/${l.model}`) ?? 0) + 1);
    return [...counts].map(([m, n]) => `${m} ×${n}`).join(', ');
  };
  return (
    <>
      <Section
        title="Combos"
        actions={
          <button type="button" className="primary" onClick={() => setEditing('new')}>
            New combo
          </button>
        }
      >
        <ErrorBox error={combos.error} />
        {combos.data?.combos.length === 0 ? <Empty>No combo yet. A combo is one model name that routes to several targets in turn: choose “New combo”.</Empty> : null}
        {combos.data?.combos.length ? (
          <table>
            <thead>
              <tr>
                <th>Name</th>
                <th>Strategy</th>
                <th>Targets</th>
                <th>Served recently</th>
                <th />
              </tr>
            </thead>
            <tbody>
              {combos.data.combos.map((c) => (
                <tr key={c.id}>
                  <td>
                    <code>{c.name}</code>
                  </td>
                  <td>{c.strategy}</td>
                  <td>{c.models.map((m) => (m.weight !== undefined && c.strategy === 'weighted' ? `${m.model} (${m.weight})` : m.model)).join(' → ')}</td>
                  <td className="small">{served(c.name) || '–'}</td>
                  <td className="actions">
                    <button type="button" onClick={() => setEditing(c)}>
                      Edit
                    </button>
                    <DeleteCombo id={c.id} name={c.name} done={combos.reload} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        ) : null}
      </Section>
      {editing ? (
        <ComboForm
          key={editing === 'new' ? 'new' : editing.id}
          combo={editing === 'new' ? undefined : editing}
          onDone={() => {
            setEditing(undefined);
            void combos.reload();
          }}
        />
      ) : null}
    </>
  );
}

function DeleteCombo({ id, name, done }: { id: string; name: string; done: () => void }) {
  const a = useAction();
  return (
    <>
      <button
        type="button"
        className="danger"
        aria-label={`Delete combo ${name}`}
        onClick={async () => {
          if (confirm(`Delete combo ${name}?`) && (await a.run(() => ok(api('DELETE /api/combos/{id}', { params: { id } }))))) done();
        }}
      >
        Delete
      </button>
      <ErrorBox error={a.error} />
    </>
  );
}

function ComboForm({ combo, onDone }: { combo?: ComboRecord; onDone: () => void }) {
  const [name, setName] = useState(combo?.name ?? '');
  const [strategy, setStrategy] = useState<Body['strategy']>(combo?.strategy ?? 'priority');
  const [timeout, setTimeoutMs] = useState(combo?.targetTimeoutMs ? String(combo.targetTimeoutMs) : '');
  const [affinity, setAffinity] = useState<NonNullable<Body['affinity']>>(combo?.affinity ?? 'off');
  const [hedge, setHedge] = useState(combo?.hedgeAfterMs ? String(combo.hedgeAfterMs) : '');
  const [recovery, setRecovery] = useState<(typeof RECOVERIES)[number]>(combo?.midStreamRecovery ?? 'off');
  const [contextFit, setContextFit] = useState(combo?.contextFit ?? false);
  const [targets, setTargets] = useState(combo?.models.map((m) => ({ model: m.model, weight: m.weight === undefined ? '' : String(m.weight) })) ?? [{ model: '', weight: '' }]);
  const models = useData(() => api('GET /api/models', { query: { all: 'true' } }).catch(() => ({ models: [] })));
  const a = useAction();
  // Checks the form can make before asking the daemon; the daemon's own 400s show under the field they name.
  const local: Record<string, string> = {};
  if (name && !/^[A-Za-z0-9._:/-]+$/.test(name)) local.name = 'Letters, digits and . _ : / - only.';
  targets.forEach((t, i) => {
    if (t.weight && !(Number(t.weight) > 0)) local[`models.${i}`] = 'A weight is a number above 0.';
  });
  if (timeout && !(Number(timeout) >= 100 && Number(timeout) <= 600000)) local.targetTimeoutMs = 'Between 100 and 600000 ms.';
  if (hedge && !(Number.isInteger(Number(hedge)) && Number(hedge) >= 50 && Number(hedge) <= 600000)) local.hedgeAfterMs = 'Between 50 and 600000 ms.';
  const err = (f: string) => local[f] ?? fieldError(a.error, f);
  const body: Body = {
    name,
    strategy,
    models: targets.filter((t) => t.model).map((t) => (t.weight ? { model: t.model, weight: Number(t.weight) } : t.model)),
    targetTimeoutMs: timeout ? Number(timeout) : null,
    affinity,
    hedgeAfterMs: hedge ? Number(hedge) : null,
    midStreamRecovery: recovery === 'off' ? null : recovery,
    contextFit,
  };
  const ids = ((models.data?.models ?? []) as Array<{ id?: string }>).map((m) => m.id).filter(Boolean) as string[];
  const anyFieldError = ['name', 'strategy', 'models', 'targetTimeoutMs', 'affinity', 'hedgeAfterMs', 'midStreamRecovery', 'contextFit'].some((f) => fieldError(a.error, f));
  return (
    <Section title={combo ? `Edit ${combo.name}` : 'New combo'}>
      <form
        className="form"
        onSubmit={async (e) => {
          e.preventDefault();
          if (Object.keys(local).length) return;
          const ok = await a.run(() => (combo ? api('PUT /api/combos/{id}', { params: { id: combo.id }, body }) : api('POST /api/combos', { body })));
          if (ok) onDone();
        }}
      >
        <Field label="Combo name" error={err('name')} hint="the model name clients send">
          <input value={name} onChange={(e) => setName(e.target.value)} required />
        </Field>
        <Field label="Strategy" error={err('strategy')}>
          <select value={strategy} onChange={(e) => setStrategy(e.target.value as Body['strategy'])}>
            {STRATEGIES.map((s) => (
              <option key={s}>{s}</option>
            ))}
          </select>
        </Field>
        <fieldset>
          <legend>Targets, in order</legend>
          <datalist id="model-ids">
            {ids.map((id) => (
              <option key={id} value={id} />
            ))}
          </datalist>
          {targets.map((t, i) => (
            <div className="row" key={i}>
              <Field label={`Target ${i + 1}`} error={err(`models.${i}`) ?? (i === 0 ? err('models') : undefined)}>
                <input list="model-ids" value={t.model} placeholder="provider/model or combo" onChange={(e) => setTargets(targets.map((x, j) => (j === i ? { ...x, model: e.target.value } : x)))} />
              </Field>
              {strategy === 'weighted' ? (
                <Field label="Weight">
                  <input inputMode="decimal" value={t.weight} onChange={(e) => setTargets(targets.map((x, j) => (j === i ? { ...x, weight: e.target.value } : x)))} />
                </Field>
              ) : null}
              <button type="button" aria-label={`Remove target ${i + 1}`} disabled={targets.length === 1} onClick={() => setTargets(targets.filter((_, j) => j !== i))}>
                Remove
              </button>
            </div>
          ))}
          <button type="button" onClick={() => setTargets([...targets, { model: '', weight: '' }])}>
            Add target
          </button>
        </fieldset>
        <Field label="Per-target timeout (ms)" error={err('targetTimeoutMs')} hint="empty: the daemon's default">
          <input inputMode="numeric" value={timeout} onChange={(e) => setTimeoutMs(e.target.value)} />
        </Field>
        <Field label="Cache affinity" error={err('affinity')} hint="keep a conversation on one account and target, so the provider's prompt cache is reused">
          <select value={affinity} onChange={(e) => setAffinity(e.target.value as NonNullable<Body['affinity']>)}>
            {AFFINITIES.map((s) => (
              <option key={s}>{s}</option>
            ))}
          </select>
        </Field>
        <Field label="Hedge after (ms)" error={err('hedgeAfterMs')} hint="empty: off; when a target sent no byte within this time, the next one starts too and the first to answer is served">
          <input inputMode="numeric" value={hedge} onChange={(e) => setHedge(e.target.value)} />
        </Field>
        <Field label="Mid-stream recovery" error={err('midStreamRecovery')} hint="a stream cut or stalled after it started: end with the client's error event, or continue on the next target">
          <select value={recovery} onChange={(e) => setRecovery(e.target.value as (typeof RECOVERIES)[number])}>
            {RECOVERIES.map((s) => (
              <option key={s}>{s}</option>
            ))}
          </select>
        </Field>
        <Field label="Context fit" error={err('contextFit')} hint="skip targets whose context window cannot hold the request">
          <input type="checkbox" checked={contextFit} onChange={(e) => setContextFit(e.target.checked)} />
        </Field>
        <div className="actions">
          <button type="submit" className="primary" disabled={a.busy}>
            {combo ? 'Save combo' : 'Create combo'}
          </button>
          <button type="button" onClick={onDone}>
            Cancel
          </button>
        </div>
        {anyFieldError ? null : <ErrorBox error={a.error} />}
      </form>
    </Section>
  );
}
