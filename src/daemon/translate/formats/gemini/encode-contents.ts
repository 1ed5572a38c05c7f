import type { IrMessage, IrPart, IrRequest, ThinkingPart, ToolResultPart } from '../../ir.js';
import { decodeError } from '../../errors.js';
import { noteDropped } from '../../util/dropped.js';
import { argumentsToObject } from '../../util/json.js';
import { encodeMedia } from './media.js';
import { signatureForClient, signedBy } from '../../util/signature.js';

type Part = Record<string, unknown>;
interface Content {
  role: 'user' | 'model';
  parts: Part[];
}

/**
 * Gemini 3 rejects a function call of the current turn that lacks a thought signature. Calls that came
 * from another provider (or from a client that dropped the signature) get the placeholder Google
 * documents for histories it did not produce, which skips that validation.
 */
export const SKIP_SIGNATURE = 'skip_thought_signature_validator';

/** One model-turn part; `signature` is a pending thought signature to put on it. */
function modelPart(part: IrPart, signature: string | undefined, request: IrRequest): Part | undefined {
  const sig = signature ? { thoughtSignature: signature } : {};
  switch (part.type) {
    case 'text':
    case 'refusal':
      return { text: part.text, ...sig };
    case 'tool_call':
      return { functionCall: { id: part.id, name: part.name, args: argumentsToObject(part.arguments) }, ...sig };
    case 'image':
    case 'document':
    case 'audio': {
      const media = encodeMedia(part);
      if (!media) noteDropped(request, 'provider file id');
      return media ? { ...media, ...sig } : undefined;
    }
    default:
      return undefined;
  }
}

/**
 * The thought signature a part may carry: in a request only Gemini's own (another family's would be
 * rejected); in a reply to a client every signature, wrapped when another family issued it.
 */
function carried(part: ThinkingPart, request: boolean): string | undefined {
  if (!part.signature) return undefined;
  if (!request) return signatureForClient('gemini', part.issuer, part.signature);
  return signedBy(part, 'gemini') ? part.signature : undefined;
}

/**
 * A model turn. Thinking with text is a `thought: true` part; an empty thinking part holding only a
 * signature (how the decoders carry a signature Gemini put on a text or call part) is folded back onto
 * the next part, or kept as an empty text part when nothing follows (Gemini streams it that way). With
 * `placeholder` (requests; never replies), an unsigned first function call gets SKIP_SIGNATURE, and only
 * Gemini's own signatures are kept. Replies hand Anthropic's redacted thinking to the client as a wrapped
 * signature on an empty thought.
 */
export function modelParts(parts: IrPart[], request: IrRequest, placeholder = true): Part[] {
  const out: Part[] = [];
  let pending: string | undefined;
  for (const part of parts) {
    if (part.type === 'thinking' && part.text === '') {
      if (pending) out.push({ text: '', thoughtSignature: pending });
      pending = carried(part, placeholder);
    } else if (part.type === 'thinking') {
      const signature = carried(part, placeholder);
      out.push({ text: part.text, thought: true, ...(signature ? { thoughtSignature: signature } : {}) });
    } else if (part.type === 'redacted_thinking') {
      if (!placeholder) out.push({ text: '', thought: true, thoughtSignature: signatureForClient('gemini', 'anthropic', part.data, true) });
      else noteDropped(request, 'redacted_thinking');
    } else {
      const encoded = modelPart(part, pending, request);
      if (encoded) out.push(encoded);
      pending = encoded ? undefined : pending;
    }
  }
  if (pending) out.push({ text: '', thoughtSignature: pending });
  const firstCall = out.find((p) => p.functionCall);
  if (placeholder && firstCall && !firstCall.thoughtSignature) firstCall.thoughtSignature = SKIP_SIGNATURE;
  return out;
}

function userParts(parts: IrPart[], request: IrRequest): Part[] {
  return parts.flatMap((part): Part[] => {
    if (part.type === 'text') return [{ text: part.text }];
    if (part.type !== 'image' && part.type !== 'document' && part.type !== 'audio') return [];
    const media = encodeMedia(part);
    if (!media) noteDropped(request, 'provider file id');
    return media ? [media] : [];
  });
}

/**
 * Tool results as function responses. Gemini needs the function's name: the result's own, else the name
 * of the earlier call with the same id. Gemini's documented keys are `output` and `error`; media in a
 * result follow as separate parts (older models do not take media inside a function response).
 */
function toolParts(parts: IrPart[], names: Map<string, string>, request: IrRequest): Part[] {
  const results = parts.filter((p): p is ToolResultPart => p.type === 'tool_result');
  const media = results.flatMap((r) => userParts(r.content.filter((c) => c.type !== 'text'), request));
  const responses = results.map((r) => {
    const name = r.name ?? names.get(r.toolCallId);
    if (!name) throw decodeError(`The tool result for call '${r.toolCallId}' matches no earlier tool call; Gemini needs the tool's name.`);
    const text = r.content.flatMap((c) => (c.type === 'text' ? [c.text] : [])).join('\n');
    return { functionResponse: { id: r.toolCallId, name, response: r.isError ? { error: text } : { output: text } } };
  });
  return [...responses, ...media];
}

/** IR messages as Gemini `contents`; consecutive turns of the same role are merged into one. */
export function encodeContents(messages: IrMessage[], request: IrRequest): Content[] {
  const contents: Content[] = [];
  const names = new Map<string, string>();
  for (const message of messages) {
    for (const p of message.parts) if (p.type === 'tool_call') names.set(p.id, p.name);
    const role = message.role === 'assistant' ? 'model' : 'user';
    const parts =
      message.role === 'assistant'
        ? modelParts(message.parts, request)
        : message.role === 'tool'
          ? toolParts(message.parts, names, request)
          : userParts(message.parts, request);
    if (!parts.length) continue;
    const last = contents[contents.length - 1];
    if (last?.role === role) last.parts.push(...parts);
    else contents.push({ role, parts });
  }
  return contents;
}
