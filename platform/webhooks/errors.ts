import { LsReportError } from '../../common/errors.ts'

/** A webhook URL that is not delivered to: not http(s), credentials in it, or a private/loopback address. */
export class WebhookUrlError extends LsReportError {
  override name = 'WebhookUrlError'
}
