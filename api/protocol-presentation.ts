import { formatUnits18, type ProtocolRecord } from '../engine/index.ts'

/**
 * Presents a protocol record for `/eth/v0/protocol/{date}`: amounts as exact decimal strings, the active keys
 * count as an integer, a_srr_7d as a percent string, or null while it is not known (`computeASrr7d`).
 *
 * @example
 * presentProtocolRecord(record).total_lseth_supply // '400000'
 */
export function presentProtocolRecord(record: ProtocolRecord): Record<string, string | number | null> {
  return {
    oracle_report: record.oracle_report,
    date: record.date,
    total_protocol_mints_lseth: formatUnits18(record.total_protocol_mints_lseth),
    total_protocol_burns_lseth: formatUnits18(record.total_protocol_burns_lseth),
    total_protocol_active_keys_count: record.total_protocol_active_keys_count,
    rewards_eth: formatUnits18(record.rewards_eth),
    gross_fee_rate: record.gross_fee_rate,
    gross_fee_lseth: formatUnits18(record.gross_fee_lseth),
    conversion_rate: record.conversion_rate,
    total_lseth_supply: formatUnits18(record.total_lseth_supply),
    a_srr_7d: record.a_srr_7d,
  }
}
