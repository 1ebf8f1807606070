/** V8 profiles of several benchmark runs merged into one, to open in Chrome DevTools. */
import type { HeapProfiler, Profiler } from 'node:inspector'

/** A V8 CPU profile (the inspector's `Profiler.stop` result). */
export type CpuProfile = Profiler.Profile
type CpuProfileNode = Profiler.ProfileNode
/** A node of V8's sampled heap profile (Node's types leave out the ids and the samples). */
export interface HeapProfileNode extends Omit<HeapProfiler.SamplingHeapProfileNode, 'children'> {
  id: number
  children: HeapProfileNode[]
}
/** V8's sampled heap profile (the inspector's `HeapProfiler.stopSampling` result, with its samples). */
export interface HeapProfile {
  head: HeapProfileNode
  samples: { size: number; nodeId: number; ordinal: number }[]
}

/** CPU profiles of several runs as one (each run's tree under one root; samples and times in turn). */
export function mergeCpuProfiles(profiles: CpuProfile[]): CpuProfile {
  const root: CpuProfileNode = {
    id: 1,
    callFrame: { functionName: '(root)', scriptId: '0', url: '', lineNumber: -1, columnNumber: -1 },
    hitCount: 0,
    children: [],
  }
  const merged: CpuProfile = {
    nodes: [root],
    startTime: profiles[0]?.startTime ?? 0,
    endTime: profiles[0]?.startTime ?? 0,
    samples: [],
    timeDeltas: [],
  }
  let offset = 1
  for (const profile of profiles) {
    for (const node of profile.nodes) {
      merged.nodes.push({ ...node, id: node.id + offset, children: node.children?.map((c) => c + offset) })
    }
    root.children?.push((profile.nodes[0]?.id ?? 0) + offset)
    merged.samples?.push(...(profile.samples ?? []).map((s) => s + offset))
    merged.timeDeltas?.push(...(profile.timeDeltas ?? []))
    merged.endTime += profile.endTime - profile.startTime
    offset += Math.max(...profile.nodes.map((n) => n.id))
  }
  return merged
}

/** Sampled heap profiles of several runs as one (each run's tree under one root). */
export function mergeHeapProfiles(profiles: HeapProfile[]): HeapProfile {
  let offset = 0
  let nextId = 1
  const shift = (node: HeapProfileNode): HeapProfileNode => {
    nextId = Math.max(nextId, node.id + offset + 1)
    return { ...node, id: node.id + offset, children: node.children.map(shift) }
  }
  const heads: HeapProfileNode[] = []
  const samples: HeapProfile['samples'] = []
  for (const profile of profiles) {
    offset = nextId
    heads.push(shift(profile.head))
    samples.push(...profile.samples.map((s) => ({ ...s, nodeId: s.nodeId + offset })))
  }
  const head: HeapProfileNode = {
    id: 0,
    callFrame: { functionName: '(root)', scriptId: '0', url: '', lineNumber: -1, columnNumber: -1 },
    selfSize: 0,
    children: heads,
  }
  return { head, samples }
}
