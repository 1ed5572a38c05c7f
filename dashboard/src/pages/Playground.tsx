import { useRef, useState } from 'react';
import { api, toApiError } from '../api/client';
import { Empty, ErrorBox, errorText, fmt, Section, useAction, useData, ok } from '../ui/kit';

interface Pane {
  model: string;
  text: string;
  error?: string;
  running: boolean;
  ms?: number;
  tokens?: string;
}

/**
 * Streams one Chat Completions reply through router (`/v1/chat/completions`, the dashboard session
 * authenticates it), calling `onText` with each delta. Returns the usage when the stream reports it.
 */
async function streamChat(model: string, system: string, prompt: string, signal: AbortSignal, onText: (t: string) => void) {
  const messages = [...(system ? [{ role: 'system', content: system }] : []), { role: 'user', content: prompt }];
  const res = await fetch('/v1/chat/completions', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    credentials: 'same-origin',
    body: JSON.stringify({ model, messages, stream: true, stream_options: { include_usage: true } }),
    signal,
  });
  if (!res.ok || !res.body) throw await toApiError(res);
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  let buf = '';
  let usage: { prompt_tokens?: number; completion_tokens?: number } | undefined;
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buf += value;
    let nl: number;
    while ((nl = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, nl).trim();
      buf = buf.slice(nl + 1);
      if (!line.startsWith('data:')) continue;
      const data = line.slice(5).trim();
      if (data === '[DONE]') continue;
      const chunk = JSON.parse(data);
      if (chunk.error) throw new Error(chunk.error.message ?? 'The stream failed.');
      const delta = chunk.choices?.[0]?.delta?.content;
      if (typeof delta === 'string') onText(delta);
      if (chunk.usage) usage = chunk.usage;
    }
  }
  return usage;
}

/** Chat with any model or combo, streaming; compare two side by side; presets; improve the prompt. */
export function Playground() {
  const models = useData(() => api('GET /api/models').then((r) => ((r.models ?? []) as Array<{ id: string }>).map((m) => m.id)));
  const presets = useData(() => api('GET /api/playground/presets').then((r) => r.presets));
  const [model, setModel] = useState('');
  const [compare, setCompare] = useState('');
  const [system, setSystem] = useState('');
  const [prompt, setPrompt] = useState('');
  const [panes, setPanes] = useState<Pane[]>([]);
  const [presetName, setPresetName] = useState('');
  const abort = useRef<AbortController>(undefined);
  const improve = useAction();
  const save = useAction();

  const run = async () => {
    abort.current?.abort();
    const ctl = new AbortController();
    abort.current = ctl;
    const targets = [model, compare].filter(Boolean);
    setPanes(targets.map((m) => ({ model: m, text: '', running: true })));
    await Promise.all(
      targets.map(async (m, i) => {
        const t0 = performance.now();
        const update = (f: (p: Pane) => Pane) => setPanes((ps) => ps.map((p, j) => (j === i ? f(p) : p)));
        try {
          const usage = await streamChat(m, system, prompt, ctl.signal, (t) => update((p) => ({ ...p, text: p.text + t })));
          update((p) => ({ ...p, running: false, ms: performance.now() - t0, tokens: usage ? `${usage.prompt_tokens ?? 0} in, ${usage.completion_tokens ?? 0} out` : undefined }));
        } catch (e) {
          update((p) => ({ ...p, running: false, error: errorText(e) }));
        }
      }),
    );
  };

  const ids = models.data ?? [];
  return (
    <>
      <Section title="Prompt">
        <form
          className="form"
          onSubmit={(e) => {
            e.preventDefault();
            void run();
          }}
        >
          <datalist id="pg-models">
            {ids.map((id) => (
              <option key={id} value={id} />
            ))}
          </datalist>
          <div className="row">
            <label className="field">
              <span>Model or combo</span>
              <input list="pg-models" value={model} onChange={(e) => setModel(e.target.value)} required placeholder="provider/model" />
            </label>
            <label className="field">
              <span>Compare with (optional)</span>
              <input list="pg-models" value={compare} onChange={(e) => setCompare(e.target.value)} placeholder="a second model" />
            </label>
          </div>
          {ids.length === 0 && models.data ? <Empty>No model available yet: add a provider connection first (Providers page).</Empty> : null}
          <label className="field">
            <span>System prompt</span>
            <textarea rows={2} value={system} onChange={(e) => setSystem(e.target.value)} />
          </label>
          <label className="field">
            <span>Message</span>
            <textarea rows={4} value={prompt} onChange={(e) => setPrompt(e.target.value)} required />
          </label>
          <div className="actions">
            <button type="submit" className="primary" disabled={panes.some((p) => p.running)}>
              Send
            </button>
            {panes.some((p) => p.running) ? (
              <button type="button" onClick={() => abort.current?.abort()}>
                Stop
              </button>
            ) : null}
            <button
              type="button"
              disabled={!model || improve.busy || (!prompt && !system)}
              onClick={async () => {
                const r = await improve.run(() => api('POST /api/playground/improve-prompt', { body: { model, system: system || undefined, prompt: prompt || undefined } }));
                if (r) {
                  if (r.improvedSystem) setSystem(r.improvedSystem);
                  if (r.improvedPrompt) setPrompt(r.improvedPrompt);
                }
              }}
            >
              {improve.busy ? 'Improving…' : 'Improve prompt'}
            </button>
          </div>
          <ErrorBox error={improve.error} />
        </form>
      </Section>
      {panes.length ? (
        <div className={panes.length > 1 ? 'grid2' : undefined}>
          {panes.map((p, i) => (
            <Section key={i} title={p.model}>
              <div className="reply" aria-live="polite" aria-busy={p.running} data-testid={`reply-${i}`}>
                {p.text}
                {p.running ? <span className="cursor">▍</span> : null}
              </div>
              <ErrorBox error={p.error} />
              {!p.running && !p.error ? (
                <p className="muted small">
                  {fmt.ms(p.ms)} {p.tokens ? `· ${p.tokens}` : ''}
                </p>
              ) : null}
            </Section>
          ))}
        </div>
      ) : null}
      <Section title="Presets">
        <ErrorBox error={presets.error} />
        {presets.data?.length === 0 ? <Empty>No preset. Fill in a model and prompt, name it below and save it.</Empty> : null}
        <ul className="plain">
          {presets.data?.map((p) => (
            <li key={p.id}>
              <button
                type="button"
                className="link"
                onClick={() => {
                  setModel(p.model);
                  setSystem(p.system ?? '');
                  setPrompt(p.messages?.find((m: { role: string }) => m.role === 'user')?.content ?? '');
                }}
              >
                {p.name}
              </button>{' '}
              <span className="muted small">{p.model}</span>{' '}
              <button
                type="button"
                aria-label={`Delete preset ${p.name}`}
                onClick={async () => {
                  if (await save.run(() => ok(api('DELETE /api/playground/presets/{id}', { params: { id: p.id } })))) void presets.reload();
                }}
              >
                Delete
              </button>
            </li>
          ))}
        </ul>
        <form
          className="inline"
          onSubmit={async (e) => {
            e.preventDefault();
            const body = { name: presetName, model, system: system || undefined, messages: prompt ? [{ role: 'user' as const, content: prompt }] : undefined };
            if (await save.run(() => api('POST /api/playground/presets', { body }))) {
              setPresetName('');
              void presets.reload();
            }
          }}
        >
          <label className="field">
            <span>Preset name</span>
            <input value={presetName} onChange={(e) => setPresetName(e.target.value)} required />
          </label>
          <button type="submit" disabled={!model}>
            Save as preset
          </button>
        </form>
        <ErrorBox error={save.error} />
      </Section>
    </>
  );
}
