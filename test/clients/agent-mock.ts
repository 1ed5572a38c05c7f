/**
 * How the mock upstream plays a model for a real coding agent. It reads the tools the agent declared (in
 * whatever upstream format router translated them to), and for a prompt that asks for the marker file it
 * answers with a call to the agent's own file-reading or shell tool, filled in from that tool's schema.
 * Once the file's content (which exists only on disk) shows up in a request, the tool really ran and its
 * result travelled back through router: the mock then answers with the final text.
 */
import type { Behavior, MockRequest } from '../mocks/types.js';

export const PLAIN_PROMPT = 'Reply with the word PLAIN_OK.';
export const PLAIN_REPLY = 'PLAIN_OK from the mock model.';
export const TOOL_PROMPT = 'TOOL_CASE: read the file marker.txt in the current folder and tell me what it says.';
export const TOOL_DONE = 'TOOL_DONE: the marker file was read.';

export interface DeclaredTool {
  name: string;
  schema: any;
}

/**
 * The plain function tools of a request in any format (not built-ins such as `web_search`, nor Responses
 * tool `namespace` groups).
 */
export function declaredTools(json: any): DeclaredTool[] {
  const out: DeclaredTool[] = [];
  for (const t of json?.tools ?? []) {
    if (t?.function?.name) out.push({ name: t.function.name, schema: t.function.parameters }); // Chat Completions
    else if (Array.isArray(t?.functionDeclarations)) {
      for (const f of t.functionDeclarations) out.push({ name: f.name, schema: f.parametersJsonSchema ?? f.parameters }); // Gemini
    } else if (t?.type === 'function' && t.name) out.push({ name: t.name, schema: t.parameters }); // Responses
    else if (t?.input_schema && t.name && (t.type === undefined || t.type === 'custom')) out.push({ name: t.name, schema: t.input_schema }); // Anthropic
  }
  return out;
}

/** Tool names each agent reads files or runs commands with, best first. */
const READERS = ['Read', 'read_file', 'read', 'shell', 'exec_command', 'shell_command', 'Bash', 'run_shell_command', 'bash'];

const PATH_KEYS = ['file_path', 'absolute_path', 'filePath', 'path'];
const COMMAND_KEYS = ['command', 'cmd'];

/** Arguments for a call that reads `file`, from the tool's own JSON schema. */
export function argumentsFor(tool: DeclaredTool, file: string): Record<string, unknown> | undefined {
  const props: Record<string, any> = tool.schema?.properties ?? {};
  const args: Record<string, unknown> = {};
  const pathKey = PATH_KEYS.find((k) => k in props);
  const commandKey = COMMAND_KEYS.find((k) => k in props);
  if (pathKey) args[pathKey] = file;
  else if (commandKey) {
    const type = String(props[commandKey]?.type ?? 'string').toLowerCase();
    args[commandKey] = type === 'array' ? ['cat', file] : `cat ${file}`;
  } else return undefined;
  // Other required fields the agents' tools have (opencode's bash wants a description).
  for (const k of tool.schema?.required ?? []) {
    if (k in args) continue;
    const type = String(props[k]?.type ?? 'string').toLowerCase();
    if (type === 'string') args[k] = 'Read the marker file';
  }
  return args;
}

/** The last user-authored text of a request, in any format, good enough to tell the scenarios apart. */
function mentions(req: MockRequest, text: string): boolean {
  return req.body.includes(text);
}

export interface AgentScript {
  /** Absolute path of the file the tool call reads. */
  file: string;
  /** Its content: proof the tool ran when it arrives upstream. */
  marker: string;
  /** Tool calls the mock made: name and arguments. */
  calls: { name: string; args: Record<string, unknown> }[];
}

/** A mock handler that plays the model for both scenarios. */
export function agentHandler(script: AgentScript) {
  return (req: MockRequest): Behavior | undefined => {
    if (!['openai.chat', 'openai.responses', 'anthropic.messages', 'gemini.generate', 'gemini.stream'].includes(req.endpoint)) return undefined;
    if (mentions(req, script.marker)) return { type: 'text', text: TOOL_DONE };
    if (mentions(req, 'TOOL_CASE')) {
      const tools = declaredTools(req.json);
      for (const name of READERS) {
        const tool = tools.find((t) => t.name === name);
        const args = tool && argumentsFor(tool, script.file);
        if (tool && args) {
          script.calls.push({ name, args });
          return { type: 'tool-calls', calls: [{ name, arguments: args }] };
        }
      }
      return { type: 'text', text: 'A title' };
    }
    if (mentions(req, 'PLAIN_OK')) return { type: 'text', text: PLAIN_REPLY };
    return undefined;
  };
}
