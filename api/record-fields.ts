/**
 * The fields of the reward records as the API shows them: engine/record-fields.ts (pure, shared with the
 * exports of jobs/exports/, which may not import api/).
 */
export * from '../engine/record-fields.ts'
