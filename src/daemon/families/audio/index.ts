import type { Family, RelayEnd } from '../family.js';
import { speechCost, transcriptionCost } from '../pricing.js';
import { badField, field, formFor, jsonAsk, lastEvent, num, requireEndpoint, requireModel, tryJson } from '../util.js';
import type { MultipartBody } from '../family.js';
import { speechReply, transcriptReply } from './reply.js';

/**
 * Audio: POST /v1/audio/speech (the audio, or SSE with `stream_format: "sse"`, relayed to the client as it
 * arrives) and /v1/audio/transcriptions and /translations (multipart `file` up to 25 MiB, re-encoded for
 * each target with its model id; the reply (JSON, text, SRT, VTT, or the SSE transcription events with
 * `stream: true`) passed through as the upstream wrote it). Priced per character, per audio minute or by
 * tokens (../pricing.ts).
 */

/** The largest audio file the transcription endpoints take: OpenAI's 25 MiB (26,214,400 bytes). */
export const AUDIO_FILE_BYTES = 25 * 1024 * 1024;

interface SpeechRequest {
  raw: Record<string, unknown>;
  model: string;
  characters: number;
  sse: boolean;
}

function speechEnd(ask: SpeechRequest, tail: string, bytes: number): RelayEnd {
  const u = ask.sse ? lastEvent(tail, 'speech.audio.done')?.usage : undefined;
  const tokens = u ? { inputTokens: num(u.input_tokens) ?? 0, outputTokens: num(u.output_tokens) ?? 0 } : undefined;
  return { usage: tokens, cost: (price) => speechCost(price, ask.characters, tokens), notes: { characters: ask.characters, audioBytes: bytes } };
}

export const speech: Family<SpeechRequest> = {
  name: 'speech',
  route: { path: '/v1/audio/speech', body: 'json', summary: 'Text to speech (OpenAI shape); the audio, or SSE with stream_format "sse", is streamed as it arrives', reply: speechReply },
  read({ json: raw }) {
    const model = requireModel(raw!);
    if (typeof raw!.input !== 'string' || raw!.input === '') throw badField("The 'input' field is required.", 'input');
    if (raw!.stream_format !== undefined && raw!.stream_format !== 'sse' && raw!.stream_format !== 'audio') throw badField("'stream_format' must be 'sse' or 'audio'.", 'stream_format');
    return { raw: raw!, model, characters: [...raw!.input].length, sse: raw!.stream_format === 'sse' };
  },
  call: (ask) => ({ model: ask.model, raw: { ...ask.raw, input: undefined, characters: ask.characters }, stream: true }),
  encode(ask, target) {
    requireEndpoint(target, 'speech', 'speech');
    return { ...jsonAsk('audio/speech', ask.raw, target.model, ask.sse ? 'text/event-stream' : '*/*'), replyType: ask.sse ? 'text/event-stream' : 'audio/mpeg' };
  },
  relay: () => true,
  relayEnd: (ask, _target, { tail, bytes }) => speechEnd(ask, tail, bytes),
  decode: ([reply], ask) => ({ body: reply!.bytes, contentType: reply!.contentType, ...speechEnd(ask, reply!.text.slice(-8192), reply!.bytes.length) }),
};

const RESPONSE_FORMATS = new Set(['json', 'text', 'srt', 'vtt', 'verbose_json', 'diarized_json']);

/** The last cue's end time of an SRT or WebVTT transcript, seconds. */
export function lastCueSeconds(text: string): number | undefined {
  const re = /-->\s*(\d+):(\d{2}):(\d{2})[.,](\d{3})/g;
  let last: RegExpExecArray | null = null;
  for (let m = re.exec(text); m; m = re.exec(text)) last = m;
  if (!last) return undefined;
  return Number(last[1]) * 3600 + Number(last[2]) * 60 + Number(last[3]) + Number(last[4]) / 1000;
}

type TranscriptUsage = { seconds?: number; tokens?: { textIn: number; audioIn: number; textOut: number } };

/**
 * Audio length and tokens a transcription reply reports: `usage` (`{type: "duration", seconds}` or
 * `{type: "tokens", input_tokens, input_token_details, output_tokens}`), verbose_json's `duration`, or the
 * last SRT/VTT cue. A plain `text` reply reports nothing (docs/audio.md).
 */
export function transcriptionUsage(text: string, format: string): TranscriptUsage {
  if (format === 'srt' || format === 'vtt') return { seconds: lastCueSeconds(text) };
  const parsed = tryJson(text);
  return usageObject(parsed?.usage, num(parsed?.duration));
}

function usageObject(u: any, duration?: number): TranscriptUsage {
  if (u?.type === 'duration') return { seconds: num(u.seconds) ?? duration };
  if (u?.type === 'tokens') {
    const d = u.input_token_details ?? {};
    const audioIn = num(d.audio_tokens) ?? 0;
    return { seconds: duration, tokens: { textIn: num(d.text_tokens) ?? Math.max(0, (num(u.input_tokens) ?? 0) - audioIn), audioIn, textOut: num(u.output_tokens) ?? 0 } };
  }
  return { seconds: duration };
}

interface TranscriptionRequest {
  form: MultipartBody;
  model: string;
  format: string;
  stream: boolean;
  fileBytes: number;
  raw: Record<string, unknown>;
}

function transcribed(ask: TranscriptionRequest, usage: TranscriptUsage): RelayEnd {
  return {
    usage: usage.tokens ? { inputTokens: usage.tokens.textIn + usage.tokens.audioIn, outputTokens: usage.tokens.textOut } : undefined,
    cost: (price) => transcriptionCost(price, usage),
    notes: { audioSeconds: usage.seconds ?? null, fileBytes: ask.fileBytes, responseFormat: ask.format },
  };
}

function transcriptionFamily(kind: 'transcriptions' | 'translations', summary: string): Family<TranscriptionRequest> {
  return {
    name: kind,
    route: { path: `/v1/audio/${kind}`, body: 'multipart', summary, reply: transcriptReply, bodyBytes: AUDIO_FILE_BYTES + 1024 * 1024, fileBytes: AUDIO_FILE_BYTES, files: 1 },
    read({ form }) {
      const model = field(form!, 'model');
      if (!model) throw badField("The 'model' field is required.", 'model');
      const file = form!.files.find((f) => f.field === 'file');
      if (!file) throw badField("The 'file' field (the audio) is required.", 'file');
      const format = field(form!, 'response_format') ?? 'json';
      if (!RESPONSE_FORMATS.has(format)) throw badField("'response_format' must be one of json, text, srt, vtt, verbose_json, diarized_json.", 'response_format');
      const stream = kind === 'transcriptions' && field(form!, 'stream') === 'true';
      const fields: Record<string, unknown> = {};
      for (const [k, v] of form!.fields) fields[k] = k in fields ? [fields[k], v].flat() : v;
      return { form: form!, model, format, stream, fileBytes: file.data.length, raw: { ...fields, prompt: undefined, fileBytes: file.data.length } };
    },
    call: (ask) => ({ model: ask.model, raw: ask.raw, stream: ask.stream }),
    encode(ask, target) {
      requireEndpoint(target, kind, kind === 'transcriptions' ? 'transcription' : 'translation');
      const replyType = ask.stream ? 'text/event-stream' : ask.format === 'json' || ask.format.endsWith('_json') ? 'application/json' : 'text/plain';
      return { path: `audio/${kind}`, ...formFor(ask.form, target.model), accept: ask.stream ? 'text/event-stream' : '*/*', replyType };
    },
    relay: (ask, _target, contentType) => ask.stream && contentType.startsWith('text/event-stream'),
    relayEnd: (ask, _target, { tail }) => transcribed(ask, usageObject(lastEvent(tail, 'transcript.text.done')?.usage)),
    decode: ([reply], ask) => ({ body: reply!.bytes, contentType: reply!.contentType, ...transcribed(ask, transcriptionUsage(reply!.text, ask.format)) }),
  };
}

export const transcriptions = transcriptionFamily(
  'transcriptions',
  'Speech to text (OpenAI shape, multipart file up to 25 MiB); json/text/srt/vtt/verbose_json; stream: true for SSE transcript events',
);
export const translations = transcriptionFamily('translations', 'Speech translated to English text (OpenAI shape, multipart file up to 25 MiB)');
