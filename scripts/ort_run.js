#!/usr/bin/env node
// Runs a model once under onnxruntime-node (CPU) on inputs from .npy files and writes each output
// as OUTDIR/<output name>.npy: the reference the Python tests compare strata's `run` against.
//
//   node scripts/ort_run.js MODEL.onnx OUTDIR NAME=FILE.npy ...
//
// .npy files: format 1.0/2.0, little-endian, C order, dtypes f4 f8 i4 i8 u1 b1. The package is
// found as bench_ort.js finds it (Node's resolution, then $STRATA_NODE_DIR, default build/node).
'use strict';
const fs = require('fs');
const path = require('path');

function fail(msg) {
  process.stderr.write(`error: ${msg}\n`);
  process.exit(1);
}

function loadOrt() {
  try {
    return require('onnxruntime-node');
  } catch (e) { /* try the build's copy */ }
  const dir = process.env.STRATA_NODE_DIR || path.join(__dirname, '..', 'build', 'node');
  try {
    return require(path.join(path.resolve(dir), 'node_modules', 'onnxruntime-node'));
  } catch (e) {
    fail(`cannot load onnxruntime-node: ${e.message}`);
  }
}

// numpy descr -> [ORT type, typed array constructor]
const TYPES = {
  '<f4': ['float32', Float32Array], '<f8': ['float64', Float64Array],
  '<i4': ['int32', Int32Array], '<i8': ['int64', BigInt64Array],
  '|u1': ['uint8', Uint8Array], '|b1': ['bool', Uint8Array],
};

function readNpy(file) {
  const buf = fs.readFileSync(file);
  if (buf.toString('latin1', 0, 6) !== '\x93NUMPY') fail(`${file}: not a .npy file`);
  const major = buf[6];
  const headerLen = major === 1 ? buf.readUInt16LE(8) : buf.readUInt32LE(8);
  const start = major === 1 ? 10 : 12;
  const header = buf.toString('latin1', start, start + headerLen);
  const descr = /'descr':\s*'([^']+)'/.exec(header);
  const order = /'fortran_order':\s*(True|False)/.exec(header);
  const shape = /'shape':\s*\(([^)]*)\)/.exec(header);
  if (!descr || !order || !shape || order[1] === 'True' || !TYPES[descr[1]])
    fail(`${file}: unsupported .npy header ${header.trim()}`);
  const dims = shape[1].split(',').map((s) => s.trim()).filter((s) => s).map(Number);
  const [type, Ctor] = TYPES[descr[1]];
  const body = buf.subarray(start + headerLen);
  const data = new Ctor(body.buffer.slice(body.byteOffset, body.byteOffset + body.length));
  return new (loadOrt().Tensor)(type, type === 'bool' ? Array.from(data, Boolean) : data, dims);
}

function writeNpy(file, tensor) {
  const descr = Object.keys(TYPES).find((k) => TYPES[k][0] === tensor.type);
  if (!descr) fail(`output type ${tensor.type} cannot be written as .npy`);
  const shape = tensor.dims.length === 1 ? `${tensor.dims[0]},` : tensor.dims.join(', ');
  let header = `{'descr': '${descr}', 'fortran_order': False, 'shape': (${shape}), }`;
  header += ' '.repeat(63 - ((header.length + 10) % 64)) + '\n';
  const prefix = Buffer.alloc(10);
  prefix.write('\x93NUMPY', 0, 'latin1');
  prefix[6] = 1;
  prefix[7] = 0;
  prefix.writeUInt16LE(header.length, 8);
  const data = tensor.type === 'bool' ? Uint8Array.from(tensor.data, Number) : tensor.data;
  fs.writeFileSync(file, Buffer.concat([prefix, Buffer.from(header, 'latin1'),
    Buffer.from(data.buffer, data.byteOffset, data.byteLength)]));
}

async function main() {
  const [model, outDir, ...specs] = process.argv.slice(2);
  if (!model || !outDir) fail('usage: ort_run.js MODEL.onnx OUTDIR NAME=FILE.npy ...');
  const ort = loadOrt();
  const feeds = {};
  for (const spec of specs) {
    const eq = spec.indexOf('=');
    if (eq <= 0) fail(`expected NAME=FILE.npy, got '${spec}'`);
    feeds[spec.slice(0, eq)] = readNpy(spec.slice(eq + 1));
  }
  const session = await ort.InferenceSession.create(model, { intraOpNumThreads: 1 });
  const results = await session.run(feeds);
  fs.mkdirSync(outDir, { recursive: true });
  for (const name of session.outputNames) writeNpy(path.join(outDir, `${name}.npy`), results[name]);
}

main().catch((e) => fail(e.message));
