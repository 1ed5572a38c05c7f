import { errorObject } from '../errors.js';
import { splitText, type Finish, type Reply } from '../reply.js';
import { dataFrame, type RenderCtx, type WireFormat } from './format.js';

const FINISH: Record<Finish, string> = {
  stop: 'STOP',
  length: 'MAX_TOKENS',
  // Gemini has no tool-call finish reason: a function call ends with STOP.
  tool_calls: 'STOP',
  content_filter: 'SAFETY',
};

const BLOCKED_RATINGS = [
  { category: 'HARM_CATEGORY_HATE_SPEECH', probability: 'NEGLIGIBLE' },
  { category: 'HARM_CATEGORY_DANGEROUS_CONTENT', probability: 'HIGH', blocked: true },
  { category: 'HARM_CATEGORY_HARASSMENT', probability: 'NEGLIGIBLE' },
  { category: 'HARM_CATEGORY_SEXUALLY_EXPLICIT', probability: 'NEGLIGIBLE' },
];

type Part = Record<string, unknown>;

function parseArgs(args: string): unknown {
  try {
    return JSON.parse(args);
  } catch {
    return {};
  }
}

/** Full usage; zero thought and cache counts are left out, as the API leaves them out. */
function fullUsage(r: Reply) {
  return {
    promptTokenCount: r.usage.input,
    candidatesTokenCount: r.usage.output - r.usage.reasoning,
    totalTokenCount: r.usage.input + r.usage.output,
    ...(r.usage.reasoning > 0 ? { thoughtsTokenCount: r.usage.reasoning } : {}),
    ...(r.usage.cached > 0 ? { cachedContentTokenCount: r.usage.cached } : {}),
    promptTokensDetails: [{ modality: 'TEXT', tokenCount: r.usage.input }],
  };
}

/** Streamed chunks before the last one only know the prompt size. */
function partialUsage(r: Reply) {
  return {
    promptTokenCount: r.usage.input,
    totalTokenCount: r.usage.input,
    promptTokensDetails: [{ modality: 'TEXT', tokenCount: r.usage.input }],
  };
}

/** Answer parts grouped as they are streamed: one group per chunk, thoughts first, calls together. */
function partGroups(r: Reply, split: boolean): Part[][] {
  const groups: Part[][] = [];
  const n = split ? r.chunks : 1;
  if (r.thinking) for (const text of splitText(r.thinking.text, n)) groups.push([{ text, thought: true }]);
  for (const text of splitText(r.text, n)) groups.push([{ text }]);
  if (r.calls.length > 0) {
    groups.push(r.calls.map((c) => ({ functionCall: { name: c.name, args: parseArgs(c.arguments) } })));
  }
  if (r.thinking) {
    // The signature rides on the first part after the thoughts, as Gemini 2.5+ sends it.
    const first = groups.flat().find((p) => p.thought !== true);
    if (first) first.thoughtSignature = r.thinking.signature;
    else groups.push([{ text: '', thoughtSignature: r.thinking.signature }]);
  }
  return groups;
}

function candidate(parts: Part[] | undefined, finish?: string) {
  if (finish === 'SAFETY') return { finishReason: finish, index: 0, safetyRatings: BLOCKED_RATINGS };
  return { content: { parts, role: 'model' }, ...(finish ? { finishReason: finish } : {}), index: 0 };
}

function envelope(ctx: RenderCtx) {
  return { modelVersion: ctx.model, responseId: ctx.id };
}

export const gemini: WireFormat = {
  jsonContentType: 'application/json; charset=UTF-8',
  sseContentType: 'text/event-stream',

  json(ctx) {
    const r = ctx.reply;
    const parts = partGroups(r, false).flat();
    return { candidates: [candidate(parts, FINISH[r.finish])], usageMetadata: fullUsage(r), ...envelope(ctx) };
  },

  stream(ctx) {
    const r = ctx.reply;
    const groups = r.finish === 'content_filter' ? [] : partGroups(r, true);
    // Gemini separates events with CRLF pairs; clients must accept both line-ending styles.
    const frame = (body: object) => dataFrame(body, '\r\n');
    if (groups.length === 0) {
      return [frame({ candidates: [candidate(undefined, FINISH[r.finish])], usageMetadata: fullUsage(r), ...envelope(ctx) })];
    }
    return groups.map((parts, i) => {
      const last = i === groups.length - 1;
      return frame({
        candidates: [candidate(parts, last ? FINISH[r.finish] : undefined)],
        usageMetadata: last ? fullUsage(r) : partialUsage(r),
        ...envelope(ctx),
      });
    });
  },

  streamError(ctx, e) {
    return dataFrame(errorObject('gemini', { ...e, model: ctx.model }, ''), '\r\n');
  },
};
