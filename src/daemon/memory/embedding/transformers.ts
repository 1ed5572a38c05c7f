import { existsSync, readFileSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { l2normalize, type EmbeddingSource } from './source.js';

/** The optional package; router does not depend on it. */
export const TRANSFORMERS_PACKAGE = '@huggingface/transformers';

export type Importer = (specifier: string) => Promise<unknown>;

// A variable specifier keeps TypeScript and bundlers from resolving the optional package at build time.
const defaultImporter: Importer = (specifier) => import(specifier);

interface Tensor {
  data: ArrayLike<number>;
  dims: number[];
}
type Extractor = (texts: string[], options: { pooling: 'mean'; normalize: boolean }) => Promise<Tensor>;
interface TransformersModule {
  env: { allowRemoteModels: boolean; allowLocalModels: boolean; localModelPath: string };
  pipeline: (task: string, model: string, options: Record<string, unknown>) => Promise<Extractor>;
}

/**
 * An ONNX sentence-embedding model run by @huggingface/transformers, from a local folder only (remote
 * model downloads are switched off). The package is imported lazily, on first use, and only if installed:
 * otherwise the source reports `@huggingface/transformers is not installed`.
 */
export async function loadTransformersModel(folder: string, importer: Importer = defaultImporter): Promise<EmbeddingSource> {
  const dir = resolve(folder);
  let mod: TransformersModule;
  try {
    mod = (await importer(TRANSFORMERS_PACKAGE)) as TransformersModule;
  } catch {
    throw new Error(`${TRANSFORMERS_PACKAGE} is not installed`);
  }
  if (!existsSync(dir)) throw new Error(`transformers model folder not found: ${folder}`);
  mod.env.allowRemoteModels = false;
  mod.env.allowLocalModels = true;
  mod.env.localModelPath = dirname(dir);
  const extractor = await mod.pipeline('feature-extraction', basename(dir), { local_files_only: true });
  const run = async (texts: string[]): Promise<Float32Array[]> => {
    const out = await extractor(texts, { pooling: 'mean', normalize: true });
    const width = out.dims.at(-1)!;
    return texts.map((_, i) => l2normalize(Float32Array.from(Array.prototype.slice.call(out.data, i * width, (i + 1) * width) as number[])));
  };
  let dimensions = 0;
  const configFile = join(dir, 'config.json');
  if (existsSync(configFile)) {
    const c = JSON.parse(readFileSync(configFile, 'utf8')) as { hidden_size?: number; dim?: number };
    dimensions = Number(c.hidden_size ?? c.dim ?? 0);
  }
  if (!dimensions) dimensions = (await run(['dimension probe']))[0]!.length;
  return { kind: 'transformers', model: basename(dir), dimensions, embed: run };
}
