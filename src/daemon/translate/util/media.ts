import type { MediaSource } from '../ir.js';

const DATA_URL = /^data:([^;,]+)?((?:;[^;,]+)*?);base64,(.*)$/s;

/** Reads a `data:<type>;base64,<data>` URL into a base64 source; any other URL stays a URL. */
export function sourceFromUrl(url: string, fallbackType = 'application/octet-stream'): MediaSource {
  const match = DATA_URL.exec(url);
  if (!match) return { kind: 'url', url };
  return { kind: 'base64', mediaType: match[1] || fallbackType, data: match[3] ?? '' };
}

/** Builds a data URL from a base64 payload and its media type. */
export function dataUrl(mediaType: string, data: string): string {
  return `data:${mediaType};base64,${data}`;
}
