import { ApiError, api } from '../api/client';
import type { DoctorFinding } from '../api/replies';
import { Empty, ErrorBox, Section, useData } from '../ui/kit';

const BADGE = { pass: 'closed', fail: 'open', skip: 'half-open' } as const;

function Finding({ f }: { f: DoctorFinding }) {
  return (
    <li data-check={f.check} data-status={f.status}>
      <span className={`badge ${BADGE[f.status]}`}>{f.status}</span> <strong>{f.check}</strong>
      {f.subject ? <span className="muted"> {f.subject}</span> : null}: {f.message}
      {f.fix ? <div className="small">Fix: {f.fix}</div> : null}
    </li>
  );
}

/**
 * The doctor's findings (what `router doctor` prints): failures first, each with its fix. The route is for
 * a dashboard opened on the daemon's own machine; from elsewhere it says so instead of an error.
 */
export function DoctorPanel() {
  const doctor = useData(async () => {
    try {
      return await api('GET /api/doctor');
    } catch (e) {
      if (e instanceof ApiError && e.status === 403) return null;
      throw e;
    }
  });
  const d = doctor.data;
  const order = { fail: 0, skip: 1, pass: 2 } as const;
  const findings = d ? [...d.findings].sort((a, b) => order[a.status] - order[b.status]) : [];
  const failed = findings.filter((f) => f.status === 'fail').length;
  return (
    <Section
      title="Doctor"
      actions={
        <button type="button" onClick={() => void doctor.reload()}>
          Check again
        </button>
      }
    >
      <ErrorBox error={doctor.error} />
      {d === null ? (
        <Empty>
          The doctor reads this machine's agent settings: open the dashboard on the daemon's machine, or run <code>router doctor</code> there.
        </Empty>
      ) : d ? (
        <>
          <p aria-live="polite">{failed ? `${failed} problem${failed === 1 ? '' : 's'} found` : 'All checks passed'}</p>
          <ul className="plain doctor">
            {findings.map((f) => (
              <Finding key={`${f.check}:${f.subject ?? ''}`} f={f} />
            ))}
          </ul>
        </>
      ) : (
        <Empty>Checking...</Empty>
      )}
    </Section>
  );
}
