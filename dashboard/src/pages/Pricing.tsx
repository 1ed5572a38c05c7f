import { useState } from 'react';
import { api } from '../api/client';
import { Empty, ErrorBox, Field, fieldError, Section, useAction, useData, ok } from '../ui/kit';

const RATES = [
  ['input', 'Input'],
  ['output', 'Output'],
  ['cacheRead', 'Cache read'],
  ['cacheWrite', 'Cache write'],
  ['reasoning', 'Reasoning'],
] as const;
type Rate = (typeof RATES)[number][0];

const usd = (n: number | null | undefined) => (n === null || n === undefined ? '–' : `$${n}`);

/**
 * Pricing: the price table requests are costed with (shipped prices and the user's overrides, USD per
 * million tokens), with a form to set a price for any `<provider>/<model>` (a node's prefix too) and a
 * button to remove an override. Same routes as `router pricing` (`/api/pricing`).
 */
export function Pricing() {
  const [filter, setFilter] = useState('');
  const table = useData(() => api('GET /api/pricing'));
  const a = useAction();
  const [model, setModel] = useState('');
  const [rates, setRates] = useState<Record<Rate, string>>({ input: '', output: '', cacheRead: '', cacheWrite: '', reasoning: '' });
  const [saved, setSaved] = useState<string>();
  const entries = (table.data?.pricing ?? []).filter((e: any) => `${e.provider}/${e.model}`.toLowerCase().includes(filter.toLowerCase()));
  const edit = (e: any) => {
    setModel(`${e.provider}/${e.model}`);
    setRates({ input: String(e.input), output: String(e.output), cacheRead: e.cacheRead === null ? '' : String(e.cacheRead), cacheWrite: e.cacheWrite === null ? '' : String(e.cacheWrite), reasoning: e.reasoning === null ? '' : String(e.reasoning) });
  };
  const modelError = model && !/^[^/]+\/.+$/.test(model) ? 'expected <provider>/<model>' : undefined;
  return (
    <Section title="Pricing">
      <p className="hint">USD per million tokens. Your prices win over the shipped ones and the model catalog; an empty cache rate bills those tokens as input, an empty reasoning rate as output.</p>
      <Field label="Filter">
        <input value={filter} onChange={(e) => setFilter(e.target.value)} placeholder="provider or model" />
      </Field>
      <ErrorBox error={table.error} />
      {table.data && entries.length === 0 ? <Empty>No price matches.</Empty> : null}
      {entries.length ? (
        <table aria-label="Price table">
          <thead>
            <tr>
              <th>Model</th>
              {RATES.map(([k, label]) => (
                <th key={k}>{label}</th>
              ))}
              <th>Source</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {entries.map((e: any) => (
              <tr key={`${e.provider}/${e.model}`} className={e.source === 'override' ? 'override' : undefined}>
                <td>
                  {e.provider}/{e.model}
                </td>
                {RATES.map(([k]) => (
                  <td key={k}>{usd(e[k])}</td>
                ))}
                <td>{e.source}</td>
                <td className="actions">
                  <button type="button" onClick={() => edit(e)}>
                    Edit
                  </button>
                  {e.source === 'override' ? (
                    <button
                      type="button"
                      className="danger"
                      onClick={async () => {
                        if (await a.run(() => ok(api('DELETE /api/pricing/{provider}/{model}', { params: { provider: e.provider, model: e.model } })))) void table.reload();
                      }}
                    >
                      Remove override
                    </button>
                  ) : null}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
      <form
        className="form"
        onSubmit={async (ev) => {
          ev.preventDefault();
          if (modelError) return;
          const slash = model.indexOf('/');
          const body: Record<string, number> = {};
          for (const [k] of RATES) if (rates[k].trim() !== '') body[k] = Number(rates[k]);
          const r = await a.run(() => api('PUT /api/pricing/{provider}/{model}', { params: { provider: model.slice(0, slash), model: model.slice(slash + 1) }, body: body as any }));
          if (r) {
            setSaved(`Saved ${model}.`);
            void table.reload();
          }
        }}
      >
        <h3>Set a price</h3>
        <Field label="Model" error={modelError ?? fieldError(a.error, 'provider') ?? fieldError(a.error, 'model')} hint="<provider>/<model>, e.g. openai/gpt-4o or mynode/llama-3">
          <input value={model} onChange={(e) => setModel(e.target.value)} required />
        </Field>
        {RATES.map(([k, label]) => (
          <Field key={k} label={`${label} (USD / 1M tokens)`} error={fieldError(a.error, k)}>
            <input inputMode="decimal" value={rates[k]} onChange={(e) => setRates({ ...rates, [k]: e.target.value })} required={k === 'input' || k === 'output'} />
          </Field>
        ))}
        <button type="submit" className="primary">
          Save price
        </button>
        {saved && !a.error ? <p role="status">{saved}</p> : null}
        {RATES.some(([k]) => fieldError(a.error, k)) ? null : <ErrorBox error={a.error} />}
      </form>
    </Section>
  );
}
