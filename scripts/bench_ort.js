#!/usr/bin/env node
// ONNX Runtime's side of `make bench`: times a model under onnxruntime-node (CPU) the way
// `strata bench` does and prints the same report (`--json`: the same keys).
//
//   node scripts/bench_ort.js MODEL.onnx [--threads N] [--iters N] [--warmup N]
//                             [--dim NAME=SIZE ...] [--json]
//
// Inputs are seeded random data of each input's declared type and shape (floats uniform in
// [-1, 1), integers in [0, 4), bools fair coins); symbolic dims take --dim, else 1. The package
// is found through Node's usual resolution, then under $STRATA_NODE_DIR (default build/node),
// where `make bench` installs it with `npm install --ignore-scripts`.
'use strict';
const os = require('os');
const path = require('path');

const USAGE = 'usage: bench_ort.js MODEL.onnx [--threads N] [--iters N] [--warmup N] ' +
  '[--dim NAME=SIZE ...] [--json]';

function fail(msg) {
  process.stderr.write(`error: ${msg}\n`);
  process.exit(1);
}

function parseArgs(argv) {
  const o = { model: null, threads: 0, iters: 20, warmup: 3, dims: {}, json: false };
  const count = (flag, value, min) => {
    if (value === undefined || !/^\d+$/.test(value) || Number(value) < min)
      fail(`${flag} expects an integer >= ${min}, got '${value}'`);
    return Number(value);
  };
  for (let i = 0; i < argv.length; ++i) {
    const a = argv[i];
    if (a === '--threads') o.threads = count(a, argv[++i], 0);
    else if (a === '--iters') o.iters = count(a, argv[++i], 1);
    else if (a === '--warmup') o.warmup = count(a, argv[++i], 0);
    else if (a === '--dim') {
      const m = /^([^=]+)=(\d+)$/.exec(argv[++i] || '');
      if (!m) fail(`--dim expects NAME=SIZE, got '${argv[i]}'`);
      o.dims[m[1]] = Number(m[2]);
    } else if (a === '--json') o.json = true;
    else if (a === '-h' || a === '--help') { console.log(USAGE); process.exit(0); }
    else if (a.startsWith('-') || o.model !== null) fail(`unexpected argument '${a}'\n${USAGE}`);
    else o.model = a;
  }
  if (o.model === null) fail(`no model given\n${USAGE}`);
  return o;
}

function loadOrt() {
  const errors = [];
  try {
    return require('onnxruntime-node');
  } catch (e) {
    errors.push(e.message);
  }
  const dir = process.env.STRATA_NODE_DIR || path.join(__dirname, '..', 'build', 'node');
  try {
    return require(path.join(path.resolve(dir), 'node_modules', 'onnxruntime-node'));
  } catch (e) {
    errors.push(e.message);
  }
  fail(`cannot load onnxruntime-node (install it with \`npm install --prefix build/node ` +
       `--ignore-scripts onnxruntime-node\`):\n  ${errors.join('\n  ')}`);
}

// mulberry32: a small seeded generator, so every run feeds the same data.
function makeRng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const ARRAYS = {
  float32: Float32Array, float64: Float64Array, int8: Int8Array, uint8: Uint8Array,
  int16: Int16Array, uint16: Uint16Array, int32: Int32Array, uint32: Uint32Array,
  int64: BigInt64Array, uint64: BigUint64Array, bool: Uint8Array,
};

function randomTensor(ort, meta, dims, rng) {
  const Array_ = ARRAYS[meta.type];
  if (!Array_)
    fail(`input '${meta.name}' has type ${meta.type}, which this script cannot generate`);
  const shape = meta.shape.map((d) => (typeof d === 'number' && d >= 0 ? d : dims[d] ?? 1));
  const n = shape.reduce((a, b) => a * b, 1);
  const data = new Array_(n);
  for (let i = 0; i < n; ++i) {
    if (meta.type.startsWith('float')) data[i] = rng() * 2 - 1;
    else if (meta.type === 'bool') data[i] = rng() < 0.5 ? 1 : 0;
    else if (Array_ === BigInt64Array || Array_ === BigUint64Array)
      data[i] = BigInt(Math.floor(rng() * 4));
    else data[i] = Math.floor(rng() * 4);
  }
  return new ort.Tensor(meta.type, data, shape);
}

const msSince = (start) => Number(process.hrtime.bigint() - start) / 1e6;

async function main() {
  const o = parseArgs(process.argv.slice(2));
  const ort = loadOrt();
  const options = {
    executionProviders: ['cpu'],
    graphOptimizationLevel: 'all',
    executionMode: 'sequential',
    interOpNumThreads: 1,
    intraOpNumThreads: o.threads, // counts the calling thread, like strata's --threads; 0: default
  };
  let start = process.hrtime.bigint();
  let session;
  try {
    session = await ort.InferenceSession.create(o.model, options);
  } catch (e) {
    fail(`${o.model}: ${e.message}`);
  }
  const compileMs = msSince(start);

  const rng = makeRng(0);
  const feeds = {};
  for (const meta of session.inputMetadata) {
    if (!meta.isTensor) fail(`input '${meta.name}' is not a tensor`);
    feeds[meta.name] = randomTensor(ort, meta, o.dims, rng);
  }
  const times = [];
  try {
    for (let i = 0; i < o.warmup; ++i) await session.run(feeds);
    for (let i = 0; i < o.iters; ++i) {
      start = process.hrtime.bigint();
      await session.run(feeds);
      times.push(msSince(start));
    }
  } catch (e) {
    fail(`${o.model}: ${e.message}`);
  }
  times.sort((a, b) => a - b);
  const n = times.length;
  const median = n % 2 ? times[(n - 1) / 2] : (times[n / 2 - 1] + times[n / 2]) / 2;
  const mean = times.reduce((a, b) => a + b, 0) / n;
  // ORT's default (0) is one thread per core.
  const threads =
    o.threads || (os.availableParallelism ? os.availableParallelism() : os.cpus().length);
  if (o.json) {
    console.log(JSON.stringify({
      model: o.model, engine: 'onnxruntime', threads, iters: o.iters, warmup: o.warmup,
      compile_ms: compileMs, median_ms: median, min_ms: times[0], max_ms: times[n - 1],
      mean_ms: mean,
    }));
    return;
  }
  const f = (x) => x.toFixed(3);
  console.log(`model: ${o.model}`);
  const plural = threads === 1 ? '' : 's';
  console.log(`engine: onnxruntime ${ort.env.versions.node} (${threads} thread${plural})`);
  console.log(`compile: ${compileMs.toFixed(1)} ms`);
  console.log(`latency over ${o.iters} runs after ${o.warmup} warmup: median ${f(median)} ms, ` +
              `min ${f(times[0])} ms, max ${f(times[n - 1])} ms, mean ${f(mean)} ms`);
}

main().catch((e) => fail(e.stack || String(e)));
