// Settings of the gateway's HTTP: where it listens, how much of a request body it takes and how
// slowly it may arrive, the bounds on a JSON body's shape, and how much of a backend's answer it
// reads. One group of the gateway's settings registry (gateway/config/settings.ts).
import { z } from 'zod';
import type { Settings } from '../../../core/settings.ts';
import { DEFAULT_UPSTREAM_LIMITS } from '../../providers/upstream-limits.ts';
import { Int } from './value-schemas.ts';

/** Listening and the bodies in both directions, in the order --help and the docs list them. */
export const HTTP_SETTINGS = {
  host: { schema: z.string().min(1).default('0.0.0.0'), value: '<address>', env: 'TOLLGATE_HOST', help: 'address to listen on' },
  port: { schema: Int(0, 65_535).default(8080), short: '-p', value: '<port>', env: 'TOLLGATE_PORT', help: 'port to listen on' },
  listenBacklog: {
    schema: Int(1, 65_535).default(4096),
    value: '<n>',
    env: 'TOLLGATE_LISTEN_BACKLOG',
    help: 'connections the kernel queues for the gateway to accept',
    doc: "Connections the kernel holds for the gateway to accept (listen's backlog). A burst of new connections larger than it overflows the queue, and each connection past it waits for the client's SYN to be sent again, a second later: clients see a one-second first token. Node's own default is 511; the kernel caps the value at `net.core.somaxconn` (4096 on current kernels).",
  },
  idleTimeoutSeconds: {
    schema: z.coerce.number().positive().max(3600).default(72),
    value: '<s>',
    env: 'TOLLGATE_IDLE_TIMEOUT_SECONDS',
    help: 'longest a client connection stays open without a request in flight; then the gateway closes it',
    doc: "Longest a client's connection stays open with no request in flight: before its first request, and between two (keep-alive). Then the gateway closes it. A request in flight, a long stream included, is never cut by it. Keep it above the idle timeout of a load balancer in front (60 s on AWS's), so that the balancer, not the gateway, closes an idle connection first. Headers that arrive slowly are bounded by Node's 60 s, a body by `--body-timeout-seconds` and `--body-idle-seconds`.",
  },
  maxConnections: {
    schema: Int(1, 1_000_000).default(10_000),
    value: '<n>',
    env: 'TOLLGATE_MAX_CONNECTIONS',
    help: 'most client connections open at once; past it, only /healthz, /readyz and /metrics are answered (32 more), then connections are refused',
    doc: "Most client connections open at once. Past it, 32 more are taken for the probes: `/healthz`, `/readyz` and `/metrics` are answered on them, any other request gets 503 `too_many_connections`, and each closes after its answer. Past those, a new connection is closed as soon as it is accepted. So a flood of connections takes neither the file descriptors nor the health checks: keep it, plus 32 and the connections to backends and Redis, below the process's open-file limit (`ulimit -n`).",
  },
  bodyLimit: {
    schema: Int(1024, 1024 * 1024 * 1024).default(10 * 1024 * 1024),
    value: '<bytes>',
    env: 'TOLLGATE_BODY_LIMIT',
    help: 'largest request body accepted, in bytes; larger gets 413',
  },
  bodyTimeoutSeconds: {
    schema: z.coerce.number().positive().max(3600).default(120),
    value: '<s>',
    env: 'TOLLGATE_BODY_TIMEOUT_SECONDS',
    help: 'longest a request body may take to arrive whole; longer gets 408',
    doc: "Longest a request's body (JSON, or a transcription's upload) may take to arrive whole, from when the gateway starts reading it. Past it the request is answered 408 `request_timeout` in the API's envelope, what was read is let go, and the connection closes.",
  },
  bodyIdleSeconds: {
    schema: z.coerce.number().positive().max(3600).default(30),
    value: '<s>',
    env: 'TOLLGATE_BODY_IDLE_SECONDS',
    help: 'longest a request body may go without a byte; longer gets 408',
    doc: 'Longest a request body may go without a byte arriving. Past it the request is answered 408 `request_timeout`, what was read is let go, and the connection closes.',
  },
  maxJsonValues: {
    schema: Int(1000, 100_000_000).default(50_000),
    value: '<n>',
    env: 'TOLLGATE_MAX_JSON_VALUES',
    help: 'most values a JSON body may hold (arrays, objects, their elements and members); more gets 413',
    doc:
      'Most values a JSON request body may hold: every array and object, and every element or member after the first of each, counts one. They are counted as the body arrives, before it is parsed; past the bound the request is answered 413 `request_too_large` and the rest is not read. ' +
      'Parsing and checking a body takes time by its values, not its bytes, on the event loop every request shares: at 50,000 the worst body takes about 35 ms (bench/RESULTS.md, `--hostile`), where 4.8 million took seconds. Raise it for embeddings sent as more than 50,000 token ids, knowing that a body at the bound then holds every other request for longer.',
  },
  maxJsonDepth: {
    schema: Int(8, 1000).default(128),
    value: '<n>',
    env: 'TOLLGATE_MAX_JSON_DEPTH',
    help: 'most levels of arrays and objects inside one another in a JSON body; deeper gets 400',
  },
  maxJsonKeys: {
    schema: Int(16, 1_000_000).default(1024),
    value: '<n>',
    env: 'TOLLGATE_MAX_JSON_KEYS',
    help: 'most members of one object in a JSON body; more gets 413',
  },
  maxAudioBytes: {
    schema: Int(1024, 1024 * 1024 * 1024).default(25 * 1024 * 1024),
    value: '<bytes>',
    env: 'TOLLGATE_MAX_AUDIO_BYTES',
    help: 'largest audio file a transcription may upload, in bytes; larger gets 413',
    doc:
      'Largest audio file `POST /v1/audio/transcriptions` accepts, in bytes (25 MiB by default, as OpenAI). The upload is read as it arrives and refused with 413 ' +
      '`request_too_large` the moment it passes the limit (or at once when its Content-Length says it will): no more of it is read or kept. A file within it is held in memory while it is forwarded.',
  },
  audioScanWorkers: {
    schema: Int(1, 64).default(2),
    value: '<n>',
    env: 'TOLLGATE_AUDIO_SCAN_WORKERS',
    help: "worker threads reading uploaded audio files' durations at once",
    doc: "Worker threads that read uploaded audio files' durations (for their price) at once, off the event loop. A file waits for a free one at most 10 s, then is answered 503 `audio_scans_busy`; one file's reading is stopped past 10 s. Each thread may use up to 128 MB of heap while it reads; it is stopped after 2 s without work.",
  },
  audioScansPerCaller: {
    schema: Int(1, 1000).default(1),
    value: '<n>',
    env: 'TOLLGATE_AUDIO_SCANS_PER_CALLER',
    help: 'audio files one user may have waiting or being read at once; more gets 429',
    doc: "Audio files one user may have waiting for a scan thread or being read at once (their durations, before they are priced). One more is answered 429 `rate_limit_exceeded` at once, so that one user's files (junk takes a thread 10 s) cannot take every thread from the others.",
  },
  maxUpstreamBodyBytes: {
    schema: Int(1024, 2 ** 32).default(DEFAULT_UPSTREAM_LIMITS.maxBodyBytes),
    value: '<bytes>',
    env: 'TOLLGATE_MAX_UPSTREAM_BODY_BYTES',
    help: 'largest whole answer read from a backend, in bytes; larger fails over, or 502',
    doc:
      'Largest whole answer read from a backend (a JSON answer, an error body), in bytes (64 MiB by default). Past it the gateway stops reading and aborts the request, and the answer counts as ' +
      "that provider's failure: the next provider is tried, and the client gets 502 `upstream_failed` if none is left. Raise it for very large embedding batches: 2,048 vectors of 3,072 " +
      'dimensions as JSON floats are about 120 MB.',
  },
  maxUpstreamEventBytes: {
    schema: Int(1024, 2 ** 32).default(DEFAULT_UPSTREAM_LIMITS.maxEventBytes),
    value: '<bytes>',
    env: 'TOLLGATE_MAX_UPSTREAM_EVENT_BYTES',
    help: "largest single event of a backend's stream (SSE event, NDJSON line), in characters; larger ends the stream with an error event",
    doc:
      "Largest single event of a backend's stream (one SSE event, one Ollama NDJSON line), counted in characters of text since the last complete event (8 MiB by default). Past it the " +
      "gateway aborts the backend's request and ends the client's stream as for a backend that broke off: the usage of what was sent, then an `upstream_interrupted` error event.",
  },
  maxStreamBytes: {
    schema: Int(1024, 2 ** 40).default(DEFAULT_UPSTREAM_LIMITS.maxStreamBytes),
    value: '<bytes>',
    env: 'TOLLGATE_MAX_STREAM_BYTES',
    help: "most bytes of a backend's streamed answer, in all; past it the stream ends with an error event",
    doc: "Most bytes of one streamed answer from a backend, in all (64 MiB by default; a long chat answer is some tens of kB). Past it the gateway aborts the backend's request and ends the client's stream as for a backend that broke off: the usage of what was sent, then an `upstream_interrupted` error event; what was sent is charged ([budgets.md](budgets.md)).",
  },
  maxStreamSeconds: {
    schema: z.coerce
      .number()
      .positive()
      .max(86_400)
      .default(DEFAULT_UPSTREAM_LIMITS.maxStreamMs / 1000),
    value: '<s>',
    env: 'TOLLGATE_MAX_STREAM_SECONDS',
    help: "longest a backend's streamed answer may take from its first byte, paused by a slow client or not; past it the stream ends with an error event",
    doc: "Longest one streamed answer may take, from the backend's first byte (30 minutes by default), whether the backend is slow or the client stopped reading and the gateway paused the backend for it. Past it the stream ends as past `--max-stream-bytes`; a client that still does not read is disconnected 10 s later. `--chunk-timeout-seconds` bounds the time between two chunks; this bounds the whole.",
  },
} as const satisfies Settings;
