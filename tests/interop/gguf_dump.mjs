// Reads a GGUF file with Hugging Face's independent reader (@huggingface/gguf)
// and prints what it found as JSON: the interop check of Parley's GGUF writer.
import { gguf } from "@huggingface/gguf";

const path = process.argv[2];
const { metadata, tensorInfos, tensorDataOffset } = await gguf(path, {
  allowLocalFile: true,
  computeParametersCount: false,
});
const summary = {
  version: metadata.version,
  architecture: metadata["general.architecture"],
  keys: Object.keys(metadata).filter((k) => !["version", "tensor_count", "kv_count"].includes(k)).sort(),
  tensor_count: Number(metadata.tensor_count),
  data_offset: Number(tensorDataOffset),
  tensors: tensorInfos.map((t) => ({
    name: t.name,
    dims: t.shape.map(Number),
    type: t.dtype,
    offset: Number(t.offset),
  })),
  n_tokens: (metadata["tokenizer.ggml.tokens"] || []).length,
};
console.log(JSON.stringify(summary));
