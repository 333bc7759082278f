import type { ResultTable } from "./scenario.js";

/** The smallest, the middle and the largest of a set of per-round values. */
export interface Spread {
  min: number;
  median: number;
  max: number;
}

/** Min, median (the lower middle of an even count) and max; null for no values. */
export function spread(values: readonly number[]): Spread | null {
  const finite = values.filter(Number.isFinite).sort((a, b) => a - b);
  if (finite.length === 0) return null;
  return { min: finite[0]!, median: finite[Math.floor((finite.length - 1) / 2)]!, max: finite[finite.length - 1]! };
}

/** `a[i] ÷ b[i]` for each round both sides measured (NaN where either is missing or b is 0). */
export function roundRatios(a: readonly number[], b: readonly number[]): number[] {
  return a.map((value, index) => {
    const other = b[index];
    return other === undefined || other === 0 ? Number.NaN : value / other;
  });
}

/** A number with three significant digits at most, and no exponent. */
export function formatNumber(value: number): string {
  if (!Number.isFinite(value)) return "–";
  const magnitude = Math.abs(value);
  if (magnitude >= 100) return value.toFixed(0);
  if (magnitude >= 10) return value.toFixed(1);
  if (magnitude >= 1) return value.toFixed(2);
  if (magnitude === 0) return "0";
  return value.toPrecision(2);
}

/** `min / median / max`, or a dash. */
export function formatSpread(values: readonly number[], format: (value: number) => string = formatNumber): string {
  const range = spread(values);
  return range === null ? "–" : `${format(range.min)} / ${format(range.median)} / ${format(range.max)}`;
}

/** One figure measured once per round on each side of a comparison. */
export interface Figure {
  label: string;
  /** Our side's value in each round (NaN for a round that had none). */
  ours: number[];
  /** The other side's value in the same rounds. */
  theirs: number[];
}

/** What `comparisonTable` prints and `--json` keeps for one figure. */
export function figureData(figure: Figure) {
  const ratios = roundRatios(figure.ours, figure.theirs);
  return {
    label: figure.label,
    ours: figure.ours,
    theirs: figure.theirs,
    ratios,
    ours_spread: spread(figure.ours),
    theirs_spread: spread(figure.theirs),
    ratio_spread: spread(ratios),
  };
}

/**
 * A table of figures, each as min / median / max over the rounds on both sides, and the
 * ratio ours ÷ theirs taken round by round (so a round's drift falls on both sides of
 * its ratio) with its own min / median / max.
 */
export function comparisonTable(
  title: string,
  theirs: string,
  figures: readonly Figure[],
  notes: string[],
): ResultTable {
  return {
    title,
    columns: [
      "figure",
      "ours (min / median / max)",
      `${theirs} (min / median / max)`,
      `ours ÷ ${theirs} (min / median / max)`,
    ],
    rows: figures.map((figure) => [
      figure.label,
      formatSpread(figure.ours),
      formatSpread(figure.theirs),
      formatSpread(roundRatios(figure.ours, figure.theirs)),
    ]),
    notes,
  };
}
