/**
 * The oracle members' votes and the report River booked, in one comparable form, and what differs between
 * them (the follower's vote check, jobs/follower/oracle-votes.ts, docs/chain.md "Oracle votes not booked").
 * A 1.x vote is the Oracle's `ReportedConsensusLayerData` (the whole report struct); a 0.4.0 vote is
 * `CLReported` (epoch, balance in wei, validator count), booked by River 0.4/0.5 as `ConsensusLayerDataUpdate`.
 */
import type { Address } from '../common/address.ts'
import { oracleAbi, oracleLegacyAbi } from './abi.ts'
import type { DecodedLog } from './log-decoding.ts'

/** The Oracle's vote events of every version, for one log query: 1.x `ReportedConsensusLayerData`, 0.4.0 `CLReported`. */
export const oracleVotesAbi = [
  ...oracleAbi,
  ...oracleLegacyAbi.filter((item) => item.name === 'CLReported'),
] as const

/** A 1.x consensus layer report, as the members vote it and River takes it (`setConsensusLayerData`). */
export interface ConsensusLayerReport {
  epoch: bigint
  validatorsBalance: bigint
  validatorsSkimmedBalance: bigint
  validatorsExitedBalance: bigint
  validatorsExitingBalance: bigint
  validatorsCount: number
  stoppedValidatorCountPerOperator: readonly number[]
  rebalanceDepositToRedeemMode: boolean
  slashingContainmentMode: boolean
}

/** Where a log sits: its block, transaction and index in the block. */
export interface LogPlace {
  blockNumber: bigint
  transactionHash: string
  logIndex: number
}

/**
 * One report as voted or booked: its shape, epoch, the fields two reports are compared on (named as the
 * `oracle_reports` columns, values as text) and, for a 1.x report, the struct itself (to simulate it).
 */
export interface ReportOnChain extends LogPlace {
  shape: 'v1' | 'legacy'
  epoch: bigint
  fields: Record<string, string>
  report?: ConsensusLayerReport
}

/** A member's vote: the report it voted, and who voted it. */
export interface OracleVote extends ReportOnChain {
  member: Address
}

/** A field's value in the booked report and in a vote that differs from it. */
export interface FieldDifference {
  booked: string
  voted: string
}

const placeOf = (log: DecodedLog): LogPlace => ({
  blockNumber: log.blockNumber,
  transactionHash: log.transactionHash,
  logIndex: log.logIndex,
})

/** The compared fields of a 1.x report struct, named as the `oracle_reports` columns. */
function v1Fields(report: ConsensusLayerReport): Record<string, string> {
  return {
    epoch: report.epoch.toString(),
    validators_balance: report.validatorsBalance.toString(),
    validators_skimmed_balance: report.validatorsSkimmedBalance.toString(),
    validators_exited_balance: report.validatorsExitedBalance.toString(),
    validators_exiting_balance: report.validatorsExitingBalance.toString(),
    validators_count: String(report.validatorsCount),
    stopped_validator_count_per_operator: `[${report.stoppedValidatorCountPerOperator.join(',')}]`,
    rebalance_deposit_to_redeem_mode: String(report.rebalanceDepositToRedeemMode),
    slashing_containment_mode: String(report.slashingContainmentMode),
  }
}

/** A legacy report's compared fields: the epoch, the balance in wei and the validator count. */
const legacyFields = (epoch: bigint, balance: bigint, count: bigint | number): Record<string, string> => ({
  epoch: epoch.toString(),
  validators_balance: balance.toString(),
  validators_count: String(count),
})

/**
 * A member's vote from an Oracle log (`ReportedConsensusLayerData` or `CLReported`); undefined for any other
 * event.
 *
 * @example
 * oracleVoteOf(log)?.fields.validators_balance // '640109038315432876678'
 */
export function oracleVoteOf(log: DecodedLog): OracleVote | undefined {
  // biome-ignore lint/suspicious/noExplicitAny: decoded args are validated by the fetcher against the ABI
  const a = log.args as any
  if (log.eventName === 'ReportedConsensusLayerData') {
    const report = a.report as ConsensusLayerReport
    const fields = v1Fields(report)
    return { ...placeOf(log), shape: 'v1', epoch: report.epoch, fields, report, member: a.member }
  }
  if (log.eventName === 'CLReported') {
    const fields = legacyFields(a.epochId, a.newCLBalance, a.newCLValidatorCount)
    return { ...placeOf(log), shape: 'legacy', epoch: a.epochId, fields, member: a.oracleMember }
  }
  return undefined
}

/**
 * The report River booked, from its report log (`ProcessedConsensusLayerReport`, or `ConsensusLayerDataUpdate`
 * before 1.0.0, whose `roundId` is the epoch); undefined for any other event.
 *
 * @example
 * bookedReportOf(reportLog)?.epoch // 439650n
 */
export function bookedReportOf(log: DecodedLog): ReportOnChain | undefined {
  // biome-ignore lint/suspicious/noExplicitAny: decoded args are validated by the fetcher against the ABI
  const a = log.args as any
  if (log.eventName === 'ProcessedConsensusLayerReport') {
    const report = a.report as ConsensusLayerReport
    return { ...placeOf(log), shape: 'v1', epoch: report.epoch, fields: v1Fields(report), report }
  }
  if (log.eventName === 'ConsensusLayerDataUpdate') {
    const epoch = BigInt(a.roundId)
    const fields = legacyFields(epoch, a.validatorTotalBalance, a.validatorCount)
    return { ...placeOf(log), shape: 'legacy', epoch, fields }
  }
  return undefined
}

/**
 * The fields on which a vote differs from the booked report, among those both carry (a legacy report carries
 * three); empty when the vote is the booked report.
 *
 * @example
 * reportDifferences(booked, vote) // { validators_balance: { booked: '640109038314432876678', voted: '640109038315432876678' } }
 */
export function reportDifferences(
  booked: Pick<ReportOnChain, 'fields'>,
  voted: Pick<ReportOnChain, 'fields'>,
): Record<string, FieldDifference> {
  const out: Record<string, FieldDifference> = {}
  for (const [field, value] of Object.entries(voted.fields)) {
    const bookedValue = booked.fields[field]
    if (bookedValue !== undefined && bookedValue !== value) out[field] = { booked: bookedValue, voted: value }
  }
  return out
}

/**
 * Whether log place `a` comes before `b` on chain (block, then index in the block).
 *
 * @example
 * isBefore({ blockNumber: 7n, logIndex: 3 }, { blockNumber: 7n, logIndex: 17 }) // true
 */
export function isBefore(
  a: Pick<LogPlace, 'blockNumber' | 'logIndex'>,
  b: Pick<LogPlace, 'blockNumber' | 'logIndex'>,
): boolean {
  return a.blockNumber < b.blockNumber || (a.blockNumber === b.blockNumber && a.logIndex < b.logIndex)
}

/**
 * The votes cast for a booked report: those after the previous booked report (`after`; none: from the first)
 * up to the report's own log (the vote that reached the quorum is in its transaction, before it).
 *
 * @example
 * votesFor(votes, previousReport, report).filter((v) => Object.keys(reportDifferences(report, v)).length > 0)
 */
export function votesFor(
  votes: readonly OracleVote[],
  after: Pick<LogPlace, 'blockNumber' | 'logIndex'> | undefined,
  report: Pick<LogPlace, 'blockNumber' | 'logIndex'>,
): OracleVote[] {
  return votes.filter((v) => (after === undefined || isBefore(after, v)) && isBefore(v, report))
}
