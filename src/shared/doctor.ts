/**
 * Wire types of `GET /api/doctor` (what `router doctor` prints and the dashboard home shows): one finding
 * per check and subject, each failed one with the one-line fix.
 */

/** What a check concluded: `skip` when it could not tell (nothing to check, nothing answered). */
export type DoctorStatus = 'pass' | 'fail' | 'skip';

export interface DoctorFinding {
  /** The check: `daemon`, `agent`, `account`, `clock`, `disk`, `state-folder`. */
  check: string;
  /** What it looked at (an agent, an account, a file), when the check has several. */
  subject?: string;
  status: DoctorStatus;
  message: string;
  /** One line saying how to fix it (failed findings). */
  fix?: string;
}

export interface DoctorReply {
  /** True when no finding failed. */
  ok: boolean;
  /** The address agents are pointed at (the daemon's listen URL). */
  url: string;
  checkedAt: string;
  findings: DoctorFinding[];
}
