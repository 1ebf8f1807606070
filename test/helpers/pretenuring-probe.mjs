// A process that shows whether short-lived objects die young after long-lived work used their allocation
// site (what V8's allocation-site pretenuring undoes: common/v8-flags.ts). Arguments: the V8 flags to set
// first (none: V8's defaults). Prints `{old_space_growth_mb}`: how much of 2,000,000 short-lived objects,
// made after the long-lived ones, landed in the old generation. Plain JavaScript run by node itself, so
// that nothing but the flags differs between two runs.
import v8 from 'node:v8'

for (const flag of process.argv.slice(2)) v8.setFlagsFromString(flag)

/** One allocation site, as shared code has (a stream's state, an emitter's listeners). */
function makeNode(i) {
  return { i, next: null, data: [i, i + 1] }
}
const oldSpaceUsed = () =>
  v8.getHeapSpaceStatistics().find((s) => s.space_name === 'old_space')?.space_used_size ?? 0

// long-lived work: the site's objects outlive young-generation GCs (the day pipeline's rows and streams)
const kept = []
for (let i = 0; i < 400_000; i++) kept.push(makeNode(i))
// garbage of another site, so that young-generation GCs promote the long-lived ones before measuring
let sink
for (let i = 0; i < 3_000_000; i++) sink = [i]
// short-lived work at the same site (an API request's objects): each dies at once
const before = oldSpaceUsed()
for (let i = 0; i < 2_000_000; i++) sink = makeNode(i)
const growth = oldSpaceUsed() - before
process.stdout.write(
  `${JSON.stringify({ old_space_growth_mb: growth / 2 ** 20, kept: kept.length, sink: sink !== undefined })}\n`,
)
