import { route, type RouteDef } from '../http/routes.js';
import { runDoctor } from './checks.js';

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
    handler: ({ services }) => runDoctor(services),
  }),
];
