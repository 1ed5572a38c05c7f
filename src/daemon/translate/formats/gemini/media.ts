import type { AudioPart, DocumentPart, ImagePart, MediaSource } from '../../ir.js';

/**
 * Media in Gemini parts: `inlineData` (base64 + MIME type) and `fileData` (URI + MIME type). The MIME type
 * decides the IR part: images, audio, and everything else as a document.
 */
export function mediaPart(source: MediaSource, mimeType: string | undefined): ImagePart | AudioPart | DocumentPart {
  const type = mimeType ?? '';
  if (type.startsWith('image/')) return { type: 'image', source };
  if (type.startsWith('audio/') && source.kind === 'base64') return { type: 'audio', data: source.data, format: type.slice(6) };
  return { type: 'document', source };
}

/** `inlineData` as an IR part. */
export function inlinePart(blob: { mimeType: string; data: string }): ImagePart | AudioPart | DocumentPart {
  return mediaPart({ kind: 'base64', mediaType: blob.mimeType, data: blob.data }, blob.mimeType);
}

/** `fileData` as an IR part; the URI keeps its MIME type for a Gemini upstream. */
export function filePart(file: { mimeType?: string; fileUri: string }): ImagePart | AudioPart | DocumentPart {
  const source: MediaSource = { kind: 'url', url: file.fileUri, ...(file.mimeType ? { mediaType: file.mimeType } : {}) };
  return mediaPart(source, file.mimeType);
}

const EXTENSION_TYPES: Record<string, string> = {
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  webp: 'image/webp',
  heic: 'image/heic',
  pdf: 'application/pdf',
  txt: 'text/plain',
  mp3: 'audio/mp3',
  wav: 'audio/wav',
  mp4: 'video/mp4',
};

/** MIME type for a URL without one: from its extension, else the given fallback. */
export function guessMimeType(url: string, fallback: string): string {
  const path = url.split(/[?#]/)[0] ?? '';
  const ext = path.slice(path.lastIndexOf('.') + 1).toLowerCase();
  return EXTENSION_TYPES[ext] ?? fallback;
}

/** An IR media part as a Gemini part; provider file ids mean nothing to Gemini and yield nothing. */
export function encodeMedia(part: ImagePart | DocumentPart | AudioPart): Record<string, unknown> | undefined {
  if (part.type === 'audio') return { inlineData: { mimeType: `audio/${part.format}`, data: part.data } };
  const s = part.source;
  const fallback = part.type === 'image' ? 'image/jpeg' : 'application/pdf';
  switch (s.kind) {
    case 'base64':
      return { inlineData: { mimeType: s.mediaType, data: s.data } };
    case 'url':
      return { fileData: { mimeType: s.mediaType ?? guessMimeType(s.url, fallback), fileUri: s.url } };
    case 'text':
      return { text: s.text };
    case 'file':
      return undefined;
  }
}
