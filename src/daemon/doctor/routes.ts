import { z } from 'zod';
import type { DoctorReply } from '../../shared/doctor.js';
import { isoTime } from '../http/replies.js';
import { route, type RouteDef } from '../http/routes.js';
import { runDoctor } from './checks.js';

const doctorReply = z.object({
  ok: z.boolean(),
  url: z.string(),
  checkedAt: isoTime,
  findings: z.array(
    z.object({ check: z.string(), subject: z.string().optional(), status: z.enum(['pass', 'fail', 'skip']), message: z.string(), fix: z.string().optional() }),
  ),
}) satisfies z.ZodType<DoctorReply>;

/**
 * The doctor. Local tier: it reads the coding agents' settings files on this machine and names paths, so
 * only a loopback caller with management credentials (the CLI, the dashboard on this machine) may ask.
 */
export const doctorRoutes: RouteDef[] = [
  route({
    method: 'GET',
    path: '/api/doctor',
    tier: 'local',
    tag: 'system',
    summary: "Re-check the daemon, each configured agent's settings and key, each account's token and last error, clock skew, disk space and state-folder modes; one finding each, with its fix",
    reply: doctorReply,
    handler: ({ services }) => runDoctor(services),
  }),
];
