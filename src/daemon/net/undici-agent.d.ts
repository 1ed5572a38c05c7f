// undici's Agent without the rest of the package: `import 'undici'` loads fetch, WebSocket, caches and
// more (about 20 MB of RSS at idle); the Agent module alone is a third of that. Types come from the
// package's own declarations.
declare module 'undici/lib/dispatcher/agent.js' {
  import type { Agent } from 'undici';
  const AgentClass: typeof Agent;
  export default AgentClass;
}
