import { type ReactNode, useEffect, useState } from 'react';
import { api } from '../api/client';
import { Empty, ErrorBox, fieldError, Section, useAction, useData } from '../ui/kit';

/** JSON Schema of one value, as `GET /api/settings/schema` gives it. */
type Schema = {
  type?: string;
  enum?: unknown[];
  anyOf?: Schema[];
  const?: unknown;
  minimum?: number;
  maximum?: number;
  format?: string;
  items?: Schema;
  properties?: Record<string, Schema>;
  description?: string;
};

interface SettingDoc {
  key: string;
  description: string;
  default: unknown;
  secret: boolean;
  secretFields?: string[];
  unit?: string;
  schema: Schema;
}

interface SchemaReply {
  groups: Array<{ id: string; title: string; settings: SettingDoc[] }>;
}

type Values = Record<string, unknown>;

/**
 * Every setting, grouped as the daemon's settings schema groups them, each with its description, a control
 * of its type (a switch, a number with its bounds, a choice, text, a masked secret, a list, sub-settings)
 * and its default. Nothing here names a setting: a new one appears by being declared in the daemon.
 */
export function Settings() {
  const docs = useData(async () => (await api('GET /api/settings/schema')) as unknown as SchemaReply);
  const values = useData(async () => (await api('GET /api/settings')) as Values);
  return (
    <>
      <p className="muted">Changes apply at once when a group is saved. Secret values show masked; typing a new value replaces them.</p>
      <ErrorBox error={docs.error ?? values.error} />
      {docs.data && docs.data.groups.length === 0 ? <Empty>The daemon describes no settings.</Empty> : null}
      {docs.data && values.data
        ? docs.data.groups.map((g) => <SettingsGroup key={g.id} title={g.title} settings={g.settings} values={values.data!} onSaved={values.reload} />)
        : null}
    </>
  );
}

function SettingsGroup({ title, settings, values, onSaved }: { title: string; settings: SettingDoc[]; values: Values; onSaved: () => void }) {
  const initial = () => Object.fromEntries(settings.map((s) => [s.key, toDraft(s.schema, values[s.key])]));
  const [draft, setDraft] = useState<Values>(initial);
  const [local, setLocal] = useState<Record<string, string>>({});
  const [saved, setSaved] = useState(false);
  const a = useAction();
  useEffect(() => setDraft(initial()), [values]);
  return (
    <Section title={title}>
      <form
        className="form settings"
        aria-label={title}
        noValidate={false}
        onSubmit={async (e) => {
          e.preventDefault();
          setSaved(false);
          const problems: Record<string, string> = {};
          const patch: Values = {};
          for (const s of settings) {
            try {
              const next = fromDraft(s.schema, draft[s.key], s.key);
              if (JSON.stringify(next) !== JSON.stringify(values[s.key])) patch[s.key] = next;
            } catch (err) {
              problems[(err as FieldProblem).field ?? s.key] = (err as Error).message;
            }
          }
          setLocal(problems);
          if (Object.keys(problems).length) return;
          if (Object.keys(patch).length === 0) return setSaved(true);
          if (await a.run(() => api('PATCH /api/settings', { body: patch as never }))) {
            setSaved(true);
            onSaved();
          }
        }}
      >
        {settings.map((s) => (
          <SettingField
            key={s.key}
            doc={s}
            value={draft[s.key]}
            onChange={(v) => setDraft((d) => ({ ...d, [s.key]: v }))}
            error={(path) => local[path] ?? fieldError(a.error, path)}
          />
        ))}
        <div className="actions">
          <button type="submit" className="primary" disabled={a.busy}>
            Save {title.toLowerCase()}
          </button>{' '}
          {saved && !a.error ? <span role="status">Saved.</span> : null}
        </div>
        {settings.some((s) => fieldError(a.error, s.key)) ? null : <ErrorBox error={a.error} />}
      </form>
    </Section>
  );
}

class FieldProblem extends Error {
  constructor(
    message: string,
    readonly field: string,
  ) {
    super(message);
  }
}

/** What the form holds while a value is edited: numbers, lists and JSON as the text typed. */
function toDraft(schema: Schema, value: unknown): unknown {
  const kind = kindOf(schema);
  if (kind === 'object') return Object.fromEntries(Object.entries(schema.properties!).map(([k, sub]) => [k, toDraft(sub, (value as Values | undefined)?.[k])]));
  if (kind === 'number') return value == null ? '' : String(value);
  if (kind === 'list') return ((value as string[] | undefined) ?? []).join('\n');
  if (kind === 'json') return JSON.stringify(value ?? {}, null, 2);
  return value ?? (kind === 'switch' ? false : '');
}

/** The value to send for a draft; a number or JSON that does not parse is a problem of that field. */
function fromDraft(schema: Schema, draft: unknown, path: string): unknown {
  const kind = kindOf(schema);
  if (kind === 'object') return Object.fromEntries(Object.entries(schema.properties!).map(([k, sub]) => [k, fromDraft(sub, (draft as Values)[k], `${path}.${k}`)]));
  if (kind === 'number') {
    const text = String(draft).trim();
    if (text === '' || !Number.isFinite(Number(text))) throw new FieldProblem('Enter a number.', path);
    return Number(text);
  }
  if (kind === 'list')
    return String(draft)
      .split('\n')
      .map((l) => l.trim())
      .filter(Boolean);
  if (kind === 'json') {
    try {
      return JSON.parse(String(draft));
    } catch {
      throw new FieldProblem('Enter valid JSON.', path);
    }
  }
  return draft;
}

type Kind = 'switch' | 'number' | 'choice' | 'text' | 'list' | 'object' | 'json';

function kindOf(schema: Schema): Kind {
  if (schema.type === 'boolean') return 'switch';
  if (schema.type === 'integer' || schema.type === 'number') return 'number';
  if (schema.enum) return 'choice';
  if (schema.type === 'string' || schema.anyOf?.every((s) => s.type === 'string')) return 'text';
  if (schema.type === 'array' && schema.items?.type === 'string') return 'list';
  if (schema.type === 'object' && schema.properties) return 'object';
  return 'json';
}

/** A default as a person reads it: on/off, (empty), (none), numbers with their unit. */
function shown(value: unknown, unit?: string): string {
  if (typeof value === 'boolean') return value ? 'on' : 'off';
  if (value === '' || value == null) return '(empty)';
  if (Array.isArray(value)) return value.length ? value.join(', ') : '(none)';
  if (typeof value === 'number') {
    if (unit === 'bytes' && value >= 1024) return `${value.toLocaleString('en-US')} bytes (${mebibytes(value)})`;
    return `${value.toLocaleString('en-US')}${unit ? ` ${unit}` : ''}`;
  }
  if (typeof value === 'object') return Object.keys(value).length ? JSON.stringify(value) : '(none)';
  return String(value);
}

const mebibytes = (n: number) => (n >= 1024 * 1024 ? `${+(n / (1024 * 1024)).toFixed(1)} MiB` : `${+(n / 1024).toFixed(1)} KiB`);

interface FieldProps {
  doc: SettingDoc;
  value: unknown;
  onChange: (v: unknown) => void;
  error: (path: string) => string | undefined;
}

function SettingField({ doc, value, onChange, error }: FieldProps) {
  const id = `setting-${doc.key}`;
  const kind = kindOf(doc.schema);
  const err = kind === 'object' ? undefined : error(doc.key);
  return (
    <div className={err ? 'setting invalid' : 'setting'} data-setting={doc.key}>
      {kind === 'object' ? (
        <fieldset aria-describedby={`${id}-about`}>
          <legend>
            <code>{doc.key}</code>
          </legend>
          <About id={`${id}-about`} description={doc.description} />
          {Object.entries(doc.schema.properties!).map(([sub, schema]) => (
            <Control
              key={sub}
              id={`${id}-${sub}`}
              name={`${doc.key}.${sub}`}
              label={sub}
              schema={schema}
              secret={doc.secretFields?.includes(sub) ?? false}
              value={(value as Values)[sub]}
              onChange={(v) => onChange({ ...(value as Values), [sub]: v })}
              fallback={(doc.default as Values | undefined)?.[sub]}
              error={error(`${doc.key}.${sub}`)}
              described={schema.description ? `${id}-${sub}-about ${id}-${sub}-default` : `${id}-${sub}-default`}
              about={schema.description ? <About id={`${id}-${sub}-about`} description={schema.description} /> : undefined}
            />
          ))}
        </fieldset>
      ) : (
        <Control
          id={id}
          name={doc.key}
          label={doc.key}
          schema={doc.schema}
          secret={doc.secret}
          value={value}
          onChange={onChange}
          fallback={doc.default}
          unit={doc.unit}
          error={err}
          described={`${id}-about ${id}-default`}
          about={<About id={`${id}-about`} description={doc.description} />}
        />
      )}
    </div>
  );
}

function About({ id, description }: { id: string; description: string }) {
  return (
    <p className="small muted about" id={id}>
      {description}
    </p>
  );
}

interface ControlProps {
  id: string;
  name: string;
  label: string;
  schema: Schema;
  secret: boolean;
  value: unknown;
  onChange: (v: unknown) => void;
  fallback: unknown;
  unit?: string;
  error?: string;
  /** Ids of the texts that describe it (description, default). */
  described: string;
  /** Its description, shown between the label and the control. */
  about?: ReactNode;
}

/** One typed control with its label, default and error. */
function Control({ id, name, label, schema, secret, value, onChange, fallback, unit, error, described, about }: ControlProps) {
  const kind = kindOf(schema);
  const footer = (
    <>
      <small className="hint" id={`${id}-default`}>
        Default: {shown(fallback, unit)}
      </small>
      {error ? (
        <small className="field-error" role="alert">
          {error}
        </small>
      ) : null}
    </>
  );
  if (kind === 'switch') {
    return (
      <div className="field">
        <label className="check">
          <input type="checkbox" role="switch" id={id} name={name} aria-describedby={described} aria-checked={value === true} checked={value === true} onChange={(e) => onChange(e.target.checked)} />
          <code>{label}</code>
        </label>
        {about}
        {footer}
      </div>
    );
  }
  let control: ReactNode;
  if (kind === 'number') {
    control = (
      <input
        type="number"
        id={id}
        name={name}
        aria-describedby={described}
        min={schema.minimum}
        max={schema.maximum}
        step={schema.type === 'integer' ? 1 : 'any'}
        value={String(value)}
        onChange={(e) => onChange(e.target.value)}
      />
    );
  } else if (kind === 'choice') {
    control = (
      <select id={id} name={name} aria-describedby={described} value={String(value)} onChange={(e) => onChange(e.target.value)}>
        {schema.enum!.map((o) => (
          <option key={String(o)} value={String(o)}>
            {o === '' ? '(not set)' : String(o)}
          </option>
        ))}
      </select>
    );
  } else if (kind === 'text') {
    const url = schema.format === 'uri' || schema.anyOf?.some((s) => s.format === 'uri');
    control = (
      <input
        type={secret ? 'password' : url ? 'url' : 'text'}
        autoComplete={secret ? 'new-password' : 'off'}
        id={id}
        name={name}
        aria-describedby={described}
        value={String(value)}
        onChange={(e) => onChange(e.target.value)}
      />
    );
  } else {
    control = (
      <textarea id={id} name={name} aria-describedby={described} rows={kind === 'list' ? 3 : 4} spellCheck={false} value={String(value)} onChange={(e) => onChange(e.target.value)} />
    );
  }
  return (
    <label className={error ? 'field invalid' : 'field'} htmlFor={id}>
      <span>
        <code>{label}</code>
        {kind === 'number' && (schema.minimum !== undefined || schema.maximum !== undefined) ? (
          <span className="muted small">
            {' '}
            {schema.minimum ?? '…'} to {schema.maximum ?? '…'}
            {unit ? ` ${unit}` : ''}
          </span>
        ) : kind === 'list' ? (
          <span className="muted small"> one per line</span>
        ) : null}
      </span>
      {about}
      {control}
      {footer}
    </label>
  );
}
