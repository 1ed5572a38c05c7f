/**
 * `GET /api/doctor`: the daemon re-checks what makes agents work or stop working, one finding per check
 * and subject, each failure with its one-line fix. Run on demand (CLI `router doctor`, the dashboard home),
 * never on the request path.
 */
import { statfs, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { DoctorFinding, DoctorReply } from '../../shared/doctor.js';
import { PRIVATE_FILES } from '../../shared/state-folder.js';
import type { Services } from '../services.js';
import { agentFindings } from './agents.js';

/** Below this much free space the database, logs and backups may stop being written. */
export const MIN_FREE_BYTES = 512 * 1024 * 1024;
/** A clock further off than this breaks OAuth token lifetimes and signed requests. */
export const MAX_SKEW_MS = 60_000;
const CLOCK_TIMEOUT_MS = 3000;
/** Upstreams asked for their time at once (the first usable answer wins). */
const CLOCK_SOURCES = 4;

const mb = (bytes: number) => `${Math.round(bytes / (1024 * 1024))} MB`;

function daemonFinding(services: Services): DoctorFinding {
  const up = Math.round((Date.now() - services.startedAt) / 60_000);
  return { check: 'daemon', status: 'pass', message: `router ${services.version} is running at ${services.listen.url} (up ${up} min)` };
}

/** Each account: disabled or expired, its token's lifetime, and the last error its upstream gave. */
export function accountFindings(services: Services, now = Date.now()): DoctorFinding[] {
  return services.connections.list().map((c): DoctorFinding => {
    const provider = services.providers.label(c.provider);
    const subject = `${provider} '${c.name}' (${c.id})`;
    const relogin = c.authKind === 'oauth' ? `sign in again: \`router login ${c.provider}\` (or \`router import\` the CLI's fresh login)` : `store a working key: \`router providers rm ${c.id}\`, then \`router providers add ${c.provider}\``;
    if (!c.isActive) {
      if (c.testStatus === 'expired') return { check: 'account', subject, status: 'fail', message: `disabled after its credential was refused: ${c.lastError ?? 'expired'}`, fix: relogin };
      return { check: 'account', subject, status: 'skip', message: 'disabled (not used for requests)' };
    }
    const expires = c.expiresAt ? Date.parse(c.expiresAt) : Number.NaN;
    if (c.authKind === 'oauth' && expires <= now && !c.credential.refreshToken) {
      return { check: 'account', subject, status: 'fail', message: `token expired at ${c.expiresAt} and there is no refresh token`, fix: relogin };
    }
    if (c.lastError) return { check: 'account', subject, status: 'fail', message: `last upstream error: ${c.lastError}`, fix: `${relogin}; then \`router providers test ${c.id}\`` };
    const freshness = Number.isNaN(expires) ? '' : expires <= now ? `; token expired at ${c.expiresAt}, renewed with its refresh token on next use` : `; token valid until ${c.expiresAt}`;
    const tested = c.lastTestedAt ? `last test ${c.testStatus ?? 'ok'} at ${c.lastTestedAt}` : 'no error recorded';
    return { check: 'account', subject, status: 'pass', message: `${tested}${freshness}` };
  });
}

/** The skew of this clock against one upstream's `Date` header (ms, positive: this clock is ahead). */
async function skewAgainst(url: string): Promise<{ host: string; skewMs: number } | undefined> {
  try {
    const before = Date.now();
    const res = await fetch(url, { method: 'HEAD', signal: AbortSignal.timeout(CLOCK_TIMEOUT_MS) });
    const after = Date.now();
    await res.body?.cancel();
    const date = Date.parse(res.headers.get('date') ?? '');
    if (Number.isNaN(date)) return undefined;
    // The header has whole seconds: compare with the middle of the exchange, allow its resolution.
    const mid = (before + after) / 2;
    const skew = mid - date;
    return { host: new URL(url).host, skewMs: Math.abs(skew) < 1000 ? 0 : skew };
  } catch {
    return undefined;
  }
}

/** Clock skew, measured against the upstreams router talks to (their `Date` header). */
export async function clockFinding(services: Services): Promise<DoctorFinding> {
  const urls = new Set<string>();
  for (const c of services.connections.list()) {
    if (!c.isActive || urls.size >= CLOCK_SOURCES) continue;
    const def = services.providers.provider(c.provider);
    if (def) urls.add(services.providers.connectionTarget(def, c).baseUrl);
  }
  const answers = (await Promise.all([...urls].map(skewAgainst))).filter((a) => a !== undefined);
  if (answers.length === 0) return { check: 'clock', status: 'skip', message: 'not measured: no upstream answered with its time' };
  const worst = answers.reduce((a, b) => (Math.abs(b.skewMs) > Math.abs(a.skewMs) ? b : a));
  const secs = Math.round(Math.abs(worst.skewMs) / 1000);
  if (Math.abs(worst.skewMs) > MAX_SKEW_MS) {
    return {
      check: 'clock',
      status: 'fail',
      message: `this clock is ${secs} s ${worst.skewMs > 0 ? 'ahead of' : 'behind'} ${worst.host}: tokens look expired or not yet valid`,
      fix: 'turn on network time sync (e.g. `timedatectl set-ntp true`, or Date & Time settings)',
    };
  }
  return { check: 'clock', status: 'pass', message: `within ${secs} s of ${[...new Set(answers.map((a) => a.host))].join(', ')}` };
}

/** Free space on the disk holding the state folder. */
export async function diskFinding(home: string, min = MIN_FREE_BYTES): Promise<DoctorFinding> {
  try {
    const s = await statfs(home);
    const free = Number(s.bavail) * Number(s.bsize);
    if (free < min) {
      return { check: 'disk', subject: home, status: 'fail', message: `only ${mb(free)} free on the disk holding the state folder`, fix: `free at least ${mb(min)} on that disk (old database backups are in ${join(home, 'backups')})` };
    }
    return { check: 'disk', subject: home, status: 'pass', message: `${mb(free)} free` };
  } catch {
    return { check: 'disk', subject: home, status: 'skip', message: 'free space could not be read' };
  }
}

/** The state folder and its private files readable by this user only. */
export async function stateFolderFindings(home: string): Promise<DoctorFinding[]> {
  const wanted: Array<[string, number]> = [[home, 0o700], ...PRIVATE_FILES.map((f): [string, number] => [join(home, f), 0o600]), [join(home, 'backups'), 0o700]];
  const open: DoctorFinding[] = [];
  for (const [path, mode] of wanted) {
    let current: number;
    try {
      current = (await stat(path)).mode & 0o777;
    } catch {
      continue;
    }
    if ((current & 0o077) !== 0) {
      open.push({
        check: 'state-folder',
        subject: path,
        status: 'fail',
        message: `mode ${current.toString(8)} lets other users read router's state`,
        fix: `chmod ${mode.toString(8)} '${path}' (router restart tightens it too)`,
      });
    }
  }
  return open.length ? open : [{ check: 'state-folder', subject: home, status: 'pass', message: 'owner-only (folder 700, private files 600)' }];
}

/** Every check, run at once. */
export async function runDoctor(services: Services): Promise<DoctorReply> {
  const [agents, clock, disk, folder] = await Promise.all([agentFindings(services), clockFinding(services), diskFinding(services.paths.home), stateFolderFindings(services.paths.home)]);
  const findings = [daemonFinding(services), ...agents, ...accountFindings(services), clock, disk, ...folder];
  return { ok: findings.every((f) => f.status !== 'fail'), url: services.listen.url, checkedAt: new Date().toISOString(), findings };
}
