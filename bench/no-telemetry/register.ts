/**
 * Preloaded (`node --import`) into a toolgate daemon by the bench's telemetry A/B (bench/ab.ts): registers
 * the module hooks below in both of its entries, so both pay the same hooks thread. With
 * `BENCH_TELEMETRY=off` the hooks replace the one call-path hook, src/telemetry/tool-call.js, by a
 * pass-through: the daemon then runs with no telemetry installed at all (no span, no attributes, no
 * `@opentelemetry/api` context on the call path). Not a product option: nothing in src/ knows of it.
 */
import { register } from 'node:module';

register('./hooks.js', import.meta.url, { data: { stub: process.env.BENCH_TELEMETRY === 'off' } });
