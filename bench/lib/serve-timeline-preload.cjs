// Preloaded (`node -r`) into `myclaw serve` by bench/serve-timeline.mjs: marks where the start's time goes, in
// milliseconds since the process began (performance.now()), and writes them as JSON to SERVE_TIMELINE_OUT when the
// process exits. It watches the command line's bundle loader from outside: the loader compiles each file of the
// bundle with `new vm.Script` and calls the function that script evaluates to; the HTTP server's `listen` is the
// end of the start.
'use strict';
const { performance, PerformanceObserver } = require('node:perf_hooks');
const fs = require('node:fs');
const http = require('node:http');
const vm = require('node:vm');

const out = process.env.SERVE_TIMELINE_OUT;
const marks = { preload_ms: performance.now() };
let moduleMs = 0;
let depth = 0;
let files = 0;
let gcMs = 0;
let listened = false;

// Collections, counted until the server listens (each entry is reported after it happened).
const observer = new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) if (!listened || entry.startTime < marks.listen_ms) gcMs += entry.duration;
});
observer.observe({ entryTypes: ['gc'] });

const Script = vm.Script;
function WatchedScript(source, options) {
  const compiling = performance.now();
  const script = new Script(source, options);
  // Compiling a file that another one requires happens within that one's evaluation, which is timed below.
  if (depth === 0) moduleMs += performance.now() - compiling;
  const name = String(options?.filename ?? '').split(/[\\/]/).pop();
  const evaluate = script.runInThisContext.bind(script);
  script.runInThisContext = (...args) => {
    const wrapper = evaluate(...args);
    return function (...callArgs) {
      const started = performance.now();
      depth++;
      files++;
      try {
        return wrapper.apply(this, callArgs);
      } finally {
        depth--;
        const ended = performance.now();
        // A file that another one requires is timed within it: only the outermost loads are added up.
        if (depth === 0) moduleMs += ended - started;
        if (name === 'runner.cjs') marks.runner_loaded_ms = ended;
        if (/^Serve-[\w-]+\.cjs$/.test(name)) marks.serve_loaded_ms = ended;
      }
    };
  };
  return script;
}
WatchedScript.prototype = Script.prototype;
vm.Script = WatchedScript;

const listen = http.Server.prototype.listen;
http.Server.prototype.listen = function (...args) {
  if (!listened) {
    listened = true;
    marks.listen_ms = performance.now();
    marks.modules_ms = moduleMs;
    marks.module_files = files;
  }
  return listen.apply(this, args);
};

// The first connection, request and response: what the first /health costs once the server listens.
const emit = http.Server.prototype.emit;
http.Server.prototype.emit = function (event, ...args) {
  if (event === 'connection' && marks.first_connection_ms === undefined) marks.first_connection_ms = performance.now();
  if (event === 'request' && marks.first_request_ms === undefined) {
    marks.first_request_ms = performance.now();
    args[1].once('finish', () => {
      marks.first_response_ms = performance.now();
    });
  }
  return emit.call(this, event, ...args);
};

process.once('exit', () => {
  observer.disconnect();
  if (out) fs.writeFileSync(out, JSON.stringify({ ...marks, gc_ms: gcMs }));
});
