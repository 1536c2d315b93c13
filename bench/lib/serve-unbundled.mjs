// `myclaw serve` from ../../dist's modules (not the bundle), so that bench/lib/count-ops.mjs sees the same Effect.
import { NodeRuntime } from '@effect/platform-node';
import { serve } from '../../dist/cli/Serve.js';

NodeRuntime.runMain(serve);
