/** One sample of the long run, as plotted and kept (`samples.json`). */
export interface PlottedSample {
  /** Seconds since the run began. */
  t: number;
  phase: string;
  offeredPerSecond: number;
  endedPerSecond: number;
  /** Answered `backgrounded`: their end comes as a notification. */
  backgroundedPerSecond?: number;
  /** Told to come back later (overloaded, or the store away), nothing kept. */
  refusedPerSecond?: number;
  failedPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  /** From a call's making to its job's start in a worker: the wait for a claim (0: none started). */
  startP50Ms?: number;
  startP99Ms?: number;
  deadTuples: number | undefined;
  megabytes: number | undefined;
  /** Calls waiting for a worker, and how long the oldest has waited. */
  queued?: number | undefined;
  oldestWaitingSeconds?: number | undefined;
}

interface Panel {
  title: string;
  series: Array<{ name: string; color: string; value: (sample: PlottedSample) => number | undefined }>;
  log?: boolean;
}

const PANELS: readonly Panel[] = [
  {
    title: 'calls per second',
    series: [
      { name: 'offered', color: '#999', value: (s) => s.offeredPerSecond },
      { name: 'ended', color: '#1f77b4', value: (s) => s.endedPerSecond },
      { name: 'backgrounded', color: '#17becf', value: (s) => s.backgroundedPerSecond },
      { name: 'refused', color: '#bcbd22', value: (s) => s.refusedPerSecond },
      { name: 'failed', color: '#d62728', value: (s) => s.failedPerSecond },
    ],
  },
  {
    title: 'calls waiting for a worker',
    series: [{ name: 'queued', color: '#e377c2', value: (s) => s.queued }],
  },
  {
    title: "the oldest waiting call's age, s",
    series: [{ name: 'oldest', color: '#7f7f7f', value: (s) => s.oldestWaitingSeconds }],
  },
  {
    title: 'latency, ms (log)',
    log: true,
    series: [
      { name: 'p50', color: '#2ca02c', value: (s) => s.p50Ms || undefined },
      { name: 'p99', color: '#ff7f0e', value: (s) => s.p99Ms || undefined },
    ],
  },
  {
    title: 'making to start (the claim), ms (log)',
    log: true,
    series: [
      { name: 'p50', color: '#2ca02c', value: (s) => s.startP50Ms || undefined },
      { name: 'p99', color: '#ff7f0e', value: (s) => s.startP99Ms || undefined },
    ],
  },
  { title: 'dead tuples', series: [{ name: 'dead', color: '#9467bd', value: (s) => s.deadTuples }] },
  {
    title: 'tables and indexes, MB',
    series: [{ name: 'size', color: '#8c564b', value: (s) => s.megabytes }],
  },
];

const WIDTH = 960;
const PANEL_HEIGHT = 150;
const LEFT = 70;
const TOP = 30;

const escaped = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;');

/** The run's samples as an SVG image: a panel per figure, each phase a band named at its top. */
export function plotRun(title: string, samples: readonly PlottedSample[]): string {
  const end = Math.max(1, ...samples.map((s) => s.t));
  const x = (t: number) => LEFT + ((WIDTH - LEFT - 20) * t) / end;
  const parts: string[] = [];
  const height = TOP + PANELS.length * (PANEL_HEIGHT + 30);
  parts.push(`<rect width="${WIDTH}" height="${height}" fill="white"/>`);
  parts.push(`<text x="${LEFT}" y="18" font-size="14">${escaped(title)}</text>`);
  // The phases: alternate bands, named in the first panel.
  const phases: Array<{ name: string; from: number; to: number }> = [];
  for (const sample of samples) {
    const last = phases.at(-1);
    if (last?.name === sample.phase) last.to = sample.t;
    else phases.push({ name: sample.phase, from: last ? last.to : 0, to: sample.t });
  }
  PANELS.forEach((panel, p) => {
    const top = TOP + p * (PANEL_HEIGHT + 30) + 20;
    phases.forEach((phase, i) => {
      if (i % 2 === 1)
        parts.push(
          `<rect x="${x(phase.from)}" y="${top}" width="${x(phase.to) - x(phase.from)}" height="${PANEL_HEIGHT}" fill="#f3f3f3"/>`,
        );
      if (p === 0)
        parts.push(
          `<text x="${x(phase.from) + 2}" y="${top - 4}" font-size="9">${escaped(phase.name)}</text>`,
        );
    });
    const values = samples
      .flatMap((s) => panel.series.map((one) => one.value(s)))
      .filter((v): v is number => v !== undefined && Number.isFinite(v));
    const scale = (v: number) => (panel.log ? Math.log10(Math.max(v, 0.1)) : v);
    const low = panel.log ? scale(Math.min(...values, 1)) : 0;
    const high = Math.max(low + 1e-9, scale(Math.max(...values, 1)));
    const y = (v: number) => top + PANEL_HEIGHT - ((scale(v) - low) / (high - low)) * PANEL_HEIGHT;
    parts.push(
      `<rect x="${LEFT}" y="${top}" width="${WIDTH - LEFT - 20}" height="${PANEL_HEIGHT}" fill="none" stroke="#ccc"/>`,
    );
    parts.push(`<text x="4" y="${top + 12}" font-size="11">${escaped(panel.title)}</text>`);
    const highest = panel.log ? 10 ** high : high;
    parts.push(
      `<text x="4" y="${top + 26}" font-size="10">${Math.round(highest).toLocaleString('en')}</text>`,
    );
    panel.series.forEach((one, s) => {
      const points = samples
        .map((sample) => [sample.t, one.value(sample)] as const)
        .filter((point): point is readonly [number, number] => point[1] !== undefined)
        .map(([t, v]) => `${x(t).toFixed(1)},${y(v).toFixed(1)}`);
      parts.push(
        `<polyline fill="none" stroke="${one.color}" stroke-width="1.5" points="${points.join(' ')}"/>`,
      );
      parts.push(
        `<text x="${LEFT + 8 + s * 70}" y="${top + PANEL_HEIGHT + 14}" font-size="10" fill="${one.color}">${one.name}</text>`,
      );
    });
  });
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${height}" font-family="sans-serif"><title>${escaped(title)}</title>${parts.join('')}</svg>\n`;
}
