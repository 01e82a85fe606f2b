
/**
 * V. Pimentel and B. G. Nickerson, *Communicating and Displaying Real-Time Data with WebSocket*,
 * IEEE Internet Computing 16(4), 2012 ("the wind-sensor study"): one browser client at a time in
 * Edmonton, Caracas, Lund or Nagaoka, a Jetty server in New Brunswick sending a 22-byte wind
 * reading at 4 Hz by WebSocket, long polling (held up to 300 ms) and polling (Δ = 150 ms); the
 * mean one-way latency t4 − t0 over 1 200 readings, clocks synchronised by NTP (offset < 2 ms).
 *
 * The means below are those the article's text states for its selected tests (Table 1's other
 * cells are not in our copy); null where the text gives none for that site.
 */
export interface StudyRow {
  readonly site: string;
  /** Mean latency (ms) by WebSocket, long polling and polling. */
  readonly websocket: number | null;
  readonly longPoll: number | null;
  readonly poll: number | null;
  /** Where in the article the figures come from. */
  readonly source: string;
}

export const WIND_STUDY_ROWS: readonly StudyRow[] = [
  { site: 'Edmonton, Canada', websocket: 40.3, longPoll: 41.3, poll: 151.3, source: 'selected test 9:10 a.m.: polling 3.75 × WebSocket; long polling 1.0 ms over WebSocket' },
  { site: 'Caracas, Venezuela', websocket: null, longPoll: 131.5, poll: 282.8, source: 'long polling at 10:32 a.m.; polling from the conclusion' },
  { site: 'Lund, Sweden', websocket: 91.9, longPoll: 87.5, poll: 239.8, source: 'selected test 10:53 a.m.; polling from the conclusion' },
  { site: 'Nagaoka, Japan', websocket: 163.3, longPoll: 647.0, poll: 584.3, source: 'WebSocket from the conclusion; long polling and polling at 11:22/11:28 a.m.' },
];

/** The study's summary ratios: polling's mean over WebSocket's or long polling's, over all 12 tests. */
export const WIND_STUDY_POLL_RATIO = { min: 2.3, max: 4.5 } as const;

/** What differs between the study's set-up and a run of this benchmark (printed beside the figures). */
export const WIND_STUDY_DIFFERENCES: readonly string[] = [
  'Network: the study crossed the Internet (underlying one-way latency v of about 40 to 160 ms, more to Japan); here every connection is loopback on one machine (v well under a millisecond), so our latency is the server\'s and the clients\' CPU and queueing, not distance.',
  'Clients: the study had one browser (Firefox) per test; here 100 to 10 000 simulated clients in two worker processes share the machine\'s two cores with the publisher, so their own CPU is part of the latency they measure.',
  'Message: the study sent a 22-byte reading (about 100 B/s); here each element is an RDF document of about 5.4 kB of Turtle (the parking stream), framed as the protocol says (SSE event, WebSocket text message, HTTP response).',
  'Clock: the study compared NTP-synchronised clocks (offset under 2 ms); here server and clients read the same clock.',
  'Polling: the study\'s servlet sent every buffered reading with each poll; our /latest serves the newest element only, so a poller that falls behind misses elements (counted as missed updates, not as latency). Δ is the study\'s 150 ms at 4 Hz (--poll-interval defaults to 0.6 × the interval).',
  'Long polling: the study held a request up to 300 ms (Jetty continuations); our long poll holds up to 30 s (Prefer: wait=30, If-None-Match) and, like polling, answers with the newest element.',
  'Statistics: the study gives the mean and standard deviation of 1 200 readings per test; we give the mean, p50, p99 and max over every update of every client during --duration.',
];
