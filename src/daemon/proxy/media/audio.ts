import { FastResponse } from 'srvx';
import { badRequest } from '../../http/errors.js';
import type { RouteContext } from '../../http/routes.js';
import { execute, finishOutcome } from '../execute.js';
import type { Outcome } from '../outcome.js';
import { joinUrl, type Target } from '../../providers/target.js';
import { failReply, lastEvent, mediaRequest, num, openUpstream, passThrough, readWhole, replyHeaders, requireEndpoint, tryJson, upstreamContentType } from './common.js';
import { encodeMultipart, field, type MultipartBody } from './multipart.js';
import { speechCost, transcriptionCost } from './pricing.js';

/** The largest audio file the transcription endpoints take: OpenAI's 25 MiB (26,214,400 bytes). */
export const AUDIO_FILE_BYTES = 25 * 1024 * 1024;

/** POST /v1/audio/speech: the audio (or SSE with `stream_format: "sse"`) streamed to the client as it arrives. */
export async function runSpeech(ctx: RouteContext, raw: Record<string, unknown>): Promise<Response> {
  if (typeof raw.model !== 'string' || raw.model === '') throw badRequest("The 'model' field is required.", 'model');
  if (typeof raw.input !== 'string' || raw.input === '') throw badRequest("The 'input' field is required.", 'input');
  if (raw.stream_format !== undefined && raw.stream_format !== 'sse' && raw.stream_format !== 'audio') throw badRequest("'stream_format' must be 'sse' or 'audio'.", 'stream_format');
  const characters = [...raw.input].length;
  const sse = raw.stream_format === 'sse';
  const m = mediaRequest(ctx, '/v1/audio/speech', raw.model, { ...raw, input: undefined, characters }, true);
  return execute(m.exec, {
    prepare(target) {
      requireEndpoint(target, 'speech', 'speech');
      return { url: joinUrl(target.baseUrl, 'audio/speech'), body: JSON.stringify({ ...raw, model: target.model }) };
    },
    async attempt(target, prepared, outcome, limits) {
      const open = await openUpstream(target, prepared.url, prepared.body, 'application/json', limits, m.sink, sse ? 'text/event-stream' : '*/*');
      const upstreamMs = performance.now() - open.tSend;
      const contentType = upstreamContentType(open, sse ? 'text/event-stream' : 'audio/mpeg');
      const body = passThrough(open, (error, tail, bytes) => {
        const done = sse ? lastEvent(tail, 'speech.audio.done') : undefined;
        const u = done?.usage;
        outcome.status = 200;
        outcome.streamed = true;
        outcome.upstreamMs = upstreamMs;
        outcome.error = error;
        const tokens = u ? { inputTokens: num(u.input_tokens) ?? 0, outputTokens: num(u.output_tokens) ?? 0 } : undefined;
        outcome.usage = tokens;
        outcome.costUsd = speechCost(m.services.usage.pricing.lookup(target.provider.id, target.model), characters, tokens);
        outcome.notes = { characters, audioBytes: bytes };
        finishOutcome(m.services, outcome, outcome.usage);
        if (error && !error.startsWith('The client closed')) m.services.resilience.breakers.recordFailure(target.provider.id, 'network');
      });
      const headers = replyHeaders(m, contentType, upstreamMs);
      headers['cache-control'] = 'no-cache';
      headers['x-accel-buffering'] = 'no';
      return new FastResponse(body as unknown as ReadableStream, { status: 200, headers });
    },
    fail: (last) => failReply(m, last, 'openai-chat'),
  });
}

const RESPONSE_FORMATS = new Set(['json', 'text', 'srt', 'vtt', 'verbose_json', 'diarized_json']);

/** The last cue's end time of an SRT or WebVTT transcript, seconds. */
export function lastCueSeconds(text: string): number | undefined {
  const re = /-->\s*(\d+):(\d{2}):(\d{2})[.,](\d{3})/g;
  let last: RegExpExecArray | null = null;
  for (let m = re.exec(text); m; m = re.exec(text)) last = m;
  if (!last) return undefined;
  return Number(last[1]) * 3600 + Number(last[2]) * 60 + Number(last[3]) + Number(last[4]) / 1000;
}

/**
 * Audio length and tokens a transcription reply reports: `usage` (`{type: "duration", seconds}` or
 * `{type: "tokens", input_tokens, input_token_details, output_tokens}`), verbose_json's `duration`, or the
 * last SRT/VTT cue. A plain `text` reply reports nothing (docs/audio.md).
 */
export function transcriptionUsage(text: string, format: string): { seconds?: number; tokens?: { textIn: number; audioIn: number; textOut: number } } {
  if (format === 'srt' || format === 'vtt') return { seconds: lastCueSeconds(text) };
  const parsed = tryJson(text);
  return usageObject(parsed?.usage, num(parsed?.duration));
}

function usageObject(u: any, duration?: number): { seconds?: number; tokens?: { textIn: number; audioIn: number; textOut: number } } {
  if (u?.type === 'duration') return { seconds: num(u.seconds) ?? duration };
  if (u?.type === 'tokens') {
    const d = u.input_token_details ?? {};
    const audioIn = num(d.audio_tokens) ?? 0;
    return { seconds: duration, tokens: { textIn: num(d.text_tokens) ?? Math.max(0, (num(u.input_tokens) ?? 0) - audioIn), audioIn, textOut: num(u.output_tokens) ?? 0 } };
  }
  return { seconds: duration };
}

/**
 * POST /v1/audio/transcriptions and /v1/audio/translations (multipart `file` up to 25 MiB): the form is
 * re-encoded for each target with its model id; the reply (JSON, text, SRT, VTT, or the SSE transcription
 * events with `stream: true`) is passed through as the upstream wrote it.
 */
export async function runTranscription(ctx: RouteContext, form: MultipartBody, kind: 'transcriptions' | 'translations'): Promise<Response> {
  const model = field(form, 'model');
  if (!model) throw badRequest("The 'model' field is required.", 'model');
  const file = form.files.find((f) => f.field === 'file');
  if (!file) throw badRequest("The 'file' field (the audio) is required.", 'file');
  const format = field(form, 'response_format') ?? 'json';
  if (!RESPONSE_FORMATS.has(format)) throw badRequest("'response_format' must be one of json, text, srt, vtt, verbose_json, diarized_json.", 'response_format');
  const streamField = field(form, 'stream');
  const stream = kind === 'transcriptions' && streamField === 'true';
  const fields: Record<string, unknown> = {};
  for (const [k, v] of form.fields) fields[k] = k in fields ? [fields[k], v].flat() : v;
  const m = mediaRequest(ctx, `/v1/audio/${kind}`, model, { ...fields, prompt: undefined, fileBytes: file.data.length }, stream);
  const finish = (target: Target, outcome: Outcome, upstreamMs: number, usage: ReturnType<typeof transcriptionUsage>, error?: string): void => {
    outcome.status = 200;
    outcome.upstreamMs = upstreamMs;
    outcome.error = error;
    outcome.streamed = stream;
    outcome.usage = usage.tokens ? { inputTokens: usage.tokens.textIn + usage.tokens.audioIn, outputTokens: usage.tokens.textOut } : undefined;
    outcome.costUsd = transcriptionCost(m.services.usage.pricing.lookup(target.provider.id, target.model), usage);
    outcome.notes = { audioSeconds: usage.seconds ?? null, fileBytes: file.data.length, responseFormat: format };
    finishOutcome(m.services, outcome, outcome.usage);
  };
  return execute(m.exec, {
    prepare(target) {
      requireEndpoint(target, kind, kind === 'transcriptions' ? 'transcription' : 'translation');
      const out = form.fields.map(([k, v]): [string, string] => [k, k === 'model' ? target.model : v]);
      return { url: joinUrl(target.baseUrl, `audio/${kind}`), ...encodeMultipart(out, form.files) };
    },
    async attempt(target, prepared, outcome, limits) {
      const open = await openUpstream(target, prepared.url, prepared.body, prepared.contentType, limits, m.sink, stream ? 'text/event-stream' : '*/*');
      const contentType = upstreamContentType(open, stream ? 'text/event-stream' : format === 'json' || format.endsWith('_json') ? 'application/json' : 'text/plain');
      if (stream && contentType.startsWith('text/event-stream')) {
        const upstreamMs = performance.now() - open.tSend;
        const body = passThrough(open, (error, tail) => {
          const done = lastEvent(tail, 'transcript.text.done');
          finish(target, outcome, upstreamMs, usageObject(done?.usage), error);
        });
        const headers = replyHeaders(m, contentType, upstreamMs);
        headers['cache-control'] = 'no-cache';
        headers['x-accel-buffering'] = 'no';
        return new FastResponse(body as unknown as ReadableStream, { status: 200, headers });
      }
      const { bytes, upstreamMs } = await readWhole(open);
      const text = bytes.toString('utf8');
      finish(target, outcome, upstreamMs, transcriptionUsage(text, format));
      return new FastResponse(bytes as unknown as BodyInit, { status: 200, headers: replyHeaders(m, contentType, upstreamMs) });
    },
    fail: (last) => failReply(m, last, 'openai-chat'),
  });
}
