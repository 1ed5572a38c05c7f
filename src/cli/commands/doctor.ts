import type { Command } from 'commander';
import type { DoctorFinding, DoctorReply } from '../../shared/doctor.js';
import { CliError } from '../io.js';
import { resolveTarget } from '../target.js';
import { examples, withCommon, type CommandContext } from '../common.js';

const MARK = { pass: 'ok  ', fail: 'FAIL', skip: 'skip' } as const;

/** One line per finding: status, check, subject, what was found and, for a failure, the fix. */
export function doctorLines(reply: DoctorReply): string {
  const line = (f: DoctorFinding) => `${MARK[f.status]}  ${f.check}${f.subject ? ` ${f.subject}` : ''}: ${f.message}${f.fix ? ` -> fix: ${f.fix}` : ''}`;
  const failed = reply.findings.filter((f) => f.status === 'fail').length;
  return [...reply.findings.map(line), '', failed ? `${failed} problem${failed === 1 ? '' : 's'} found` : 'all checks passed'].join('\n');
}

/** The report when the daemon does not answer: that is the finding, and the other checks need it. */
function unreachable(url: string, reason: string): DoctorReply {
  return {
    ok: false,
    url,
    checkedAt: new Date().toISOString(),
    findings: [{ check: 'daemon', status: 'fail', message: `${reason}; the other checks need it`, fix: 'run `router start` (agents are pointed at this address)' }],
  };
}

export function register(program: Command, ctx: CommandContext): void {
  examples(withCommon(program.command('doctor')), ['router doctor', 'router doctor --json | jq ".findings[] | select(.status == \\"fail\\")"'])
    .description("check that everything agents need still works: daemon, each agent's settings and key, accounts, clock, disk, state folder")
    .option('--json', 'print the findings as JSON')
    .action(
      ctx.run(async (opts) => {
        const target = resolveTarget(opts);
        let reply: DoctorReply;
        try {
          reply = await ctx.client(opts).request<DoctorReply>('GET', '/api/doctor', undefined, 30_000);
        } catch (err) {
          // A reply (401, 403, 5xx) is the daemon saying no: report it as such; no reply means it is not there.
          if (!(err instanceof CliError) || err.status !== undefined) throw err;
          reply = unreachable(target.url, err.message.replace(/; try `router start`\.$/, ''));
        }
        ctx.emit(opts, reply, () => doctorLines(reply));
        return reply.ok ? 0 : 1;
      }),
    );
}
