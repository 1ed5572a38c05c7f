import { z } from 'zod';
import type { FamilyReply } from '../family.js';

/** The audio of `POST /v1/audio/speech`, in the `response_format` asked for (mp3 by default), or SSE with `stream_format: "sse"`. */
export const speechReply: FamilyReply = {
  media: ['audio/mpeg', 'audio/opus', 'audio/ogg', 'audio/aac', 'audio/flac', 'audio/wav', 'audio/pcm'],
  events: 'With `stream_format: "sse"`: `data:` events `speech.audio.delta` (base64 audio) and a last `speech.audio.done` with usage.',
};

/**
 * A transcript as the upstream wrote it: JSON (`json`: `{text, usage?}`; `verbose_json`: language, duration,
 * segments, words; `diarized_json`: segments with speakers), plain text for `text`, `srt` and `vtt`, or the
 * transcript events with `stream: true`.
 */
export const transcriptReply: FamilyReply = {
  json: z.looseObject({ text: z.string() }),
  media: ['text/plain'],
  events: 'With `stream: true`: `data:` events `transcript.text.delta` (delta) and a last `transcript.text.done` (text, usage).',
};
