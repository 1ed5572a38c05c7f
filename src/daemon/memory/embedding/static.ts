import { existsSync, readFileSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { l2normalize, type EmbeddingSource } from './source.js';

/**
 * A static embedding model (model2vec style): one vector per vocabulary token, a text's vector is the
 * mean of its tokens' vectors, L2-normalized. No network, no native code, microseconds per text.
 *
 * Two folder layouts are read:
 * 1. router's simple format: `config.json` ({dimensions, model?, lowercase? = true}), `vocab.txt` (one
 *    token per line; line i is row i) and `embeddings.f32` (rows x dimensions little-endian float32).
 * 2. a model2vec folder: `model.safetensors` (tensor `embeddings`, F32 or F16), `tokenizer.json`
 *    (`model.vocab` as a token -> id map, or a Unigram [token, score] list) and optional `config.json`.
 *
 * Tokenization: lower-cased runs of letters/digits; a word found whole in the vocabulary is one token,
 * otherwise it is split greedily into the longest known prefix and `##` continuation pieces (WordPiece);
 * pieces that are not found are skipped.
 */
export class StaticModel {
  private readonly maxPiece: number;

  constructor(
    readonly name: string,
    readonly dimensions: number,
    private readonly vocab: Map<string, number>,
    private readonly matrix: Float32Array,
    private readonly lowercase: boolean,
  ) {
    let max = 1;
    for (const k of vocab.keys()) if (k.length > max) max = k.length;
    this.maxPiece = max;
  }

  get vocabSize(): number {
    return this.vocab.size;
  }

  /** Token ids of a text. */
  tokenize(text: string): number[] {
    const src = this.lowercase ? text.toLowerCase() : text;
    const ids: number[] = [];
    for (const word of src.match(/[\p{L}\p{N}]+/gu) ?? []) {
      const whole = this.vocab.get(word);
      if (whole !== undefined) {
        ids.push(whole);
        continue;
      }
      let start = 0;
      while (start < word.length) {
        let end = Math.min(word.length, start + this.maxPiece);
        let found: number | undefined;
        for (; end > start; end--) {
          const piece = start === 0 ? word.slice(start, end) : `##${word.slice(start, end)}`;
          found = this.vocab.get(piece);
          if (found !== undefined) break;
        }
        if (found === undefined) {
          start++; // no known piece starts here: skip one character
          continue;
        }
        ids.push(found);
        start = end;
      }
    }
    return ids;
  }

  /** Mean-pooled, L2-normalized vector of a text (all zeros when no token is known). */
  embedOne(text: string): Float32Array {
    const out = new Float32Array(this.dimensions);
    const ids = this.tokenize(text);
    if (ids.length === 0) return out;
    const d = this.dimensions;
    for (const id of ids) {
      const base = id * d;
      for (let j = 0; j < d; j++) out[j]! += this.matrix[base + j]!;
    }
    for (let j = 0; j < d; j++) out[j]! /= ids.length;
    return l2normalize(out);
  }

  source(): EmbeddingSource {
    return {
      kind: 'static',
      model: this.name,
      dimensions: this.dimensions,
      embed: async (texts) => texts.map((t) => this.embedOne(t)),
    };
  }
}

function readJson(file: string): Record<string, unknown> {
  return JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
}

/** Little-endian float32 rows from a buffer (copied, so alignment never matters). */
function f32(buf: Buffer): Float32Array {
  const out = new Float32Array(buf.length / 4);
  for (let i = 0; i < out.length; i++) out[i] = buf.readFloatLE(i * 4);
  return out;
}

function f16ToF32(h: number): number {
  const s = h & 0x8000 ? -1 : 1;
  const e = (h >> 10) & 0x1f;
  const f = h & 0x3ff;
  if (e === 0) return s * 2 ** -14 * (f / 1024);
  if (e === 0x1f) return f ? NaN : s * Infinity;
  return s * 2 ** (e - 15) * (1 + f / 1024);
}

/** Reads one 2-D tensor from a safetensors file. */
function readSafetensors(file: string, preferred: string[]): { rows: number; cols: number; data: Float32Array } {
  const buf = readFileSync(file);
  const headerLen = Number(buf.readBigUInt64LE(0));
  const header = JSON.parse(buf.subarray(8, 8 + headerLen).toString('utf8')) as Record<
    string,
    { dtype: string; shape: number[]; data_offsets: [number, number] }
  >;
  const names = Object.keys(header).filter((k) => k !== '__metadata__');
  const name = preferred.find((p) => header[p]) ?? names.find((n) => header[n]!.shape.length === 2);
  if (!name) throw new Error('model.safetensors holds no 2-D embeddings tensor');
  const t = header[name]!;
  if (t.shape.length !== 2) throw new Error(`tensor ${name} is not 2-D`);
  const [rows, cols] = t.shape as [number, number];
  const body = buf.subarray(8 + headerLen + t.data_offsets[0], 8 + headerLen + t.data_offsets[1]);
  let data: Float32Array;
  if (t.dtype === 'F32') data = f32(body);
  else if (t.dtype === 'F16') {
    data = new Float32Array(rows * cols);
    for (let i = 0; i < data.length; i++) data[i] = f16ToF32(body.readUInt16LE(i * 2));
  } else throw new Error(`unsupported tensor dtype ${t.dtype} (F32 or F16 expected)`);
  if (data.length !== rows * cols) throw new Error(`tensor ${name} has ${data.length} values, expected ${rows * cols}`);
  return { rows, cols, data };
}

/** Loads a static model folder; throws an Error with a readable reason when it is incomplete or invalid. */
export function loadStaticModel(folder: string): StaticModel {
  const dir = resolve(folder);
  if (!existsSync(dir)) throw new Error(`static model folder not found: ${folder}`);
  const configFile = join(dir, 'config.json');
  const config = existsSync(configFile) ? readJson(configFile) : {};
  const name = typeof config.model === 'string' && config.model ? config.model : basename(dir);
  const lowercase = config.lowercase !== false && config.do_lower_case !== false;

  if (existsSync(join(dir, 'vocab.txt')) && existsSync(join(dir, 'embeddings.f32'))) {
    const dims = Number(config.dimensions);
    if (!Number.isInteger(dims) || dims < 1 || dims > 8192) throw new Error('config.json must give dimensions (integer 1..8192)');
    const tokens = readFileSync(join(dir, 'vocab.txt'), 'utf8').split(/\r?\n/);
    if (tokens.at(-1) === '') tokens.pop();
    const matrix = f32(readFileSync(join(dir, 'embeddings.f32')));
    if (matrix.length !== tokens.length * dims) {
      throw new Error(`embeddings.f32 holds ${matrix.length} values; vocab.txt x dimensions = ${tokens.length * dims}`);
    }
    const vocab = new Map<string, number>();
    tokens.forEach((t, i) => {
      if (t && !vocab.has(t)) vocab.set(lowercase && !t.startsWith('[') ? t.toLowerCase() : t, i);
    });
    return new StaticModel(name, dims, vocab, matrix, lowercase);
  }

  if (existsSync(join(dir, 'model.safetensors')) && existsSync(join(dir, 'tokenizer.json'))) {
    const { rows, cols, data } = readSafetensors(join(dir, 'model.safetensors'), ['embeddings', 'embedding', 'weight']);
    const tok = readJson(join(dir, 'tokenizer.json')) as { model?: { vocab?: unknown } };
    const raw = tok.model?.vocab;
    const vocab = new Map<string, number>();
    if (Array.isArray(raw)) raw.forEach((entry, i) => vocab.set(String(Array.isArray(entry) ? entry[0] : entry), i));
    else if (raw && typeof raw === 'object') for (const [t, id] of Object.entries(raw as Record<string, number>)) vocab.set(t, id);
    else throw new Error('tokenizer.json has no model.vocab');
    for (const [t, id] of vocab) if (!Number.isInteger(id) || id < 0 || id >= rows) vocab.delete(t);
    return new StaticModel(name, cols, vocab, data, lowercase);
  }

  throw new Error('static model folder needs vocab.txt + embeddings.f32 + config.json, or model.safetensors + tokenizer.json');
}
