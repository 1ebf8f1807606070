import type { FastifyBaseLogger } from 'fastify'
import type { Bindings, ChildLoggerOptions, LogFn } from 'pino'

/**
 * A request's logger (Fastify's `request.log` and `reply.log`) that makes its pino child, with the request's
 * bindings (`request_id`), only when a line is first written through it: most requests write none but their
 * access line, which `AccessLog` writes on the parent with `request_id` among its own fields (`unbound`),
 * the same bytes as through the child. A pino child made for every request was a quarter of the logged API
 * read's logging CPU (1.4 % of the server's samples against 4.0 % for writing the access line: CPU profile of
 * bench:api).
 *
 * @example
 * // Fastify({ childLoggerFactory: (logger, bindings, options) => new RequestLogger(logger, bindings, options) })
 * request.log.error({ err }, 'request failed') // {"level":50,...,"request_id":"…","err":{…},"msg":"request failed"}
 */
export class RequestLogger implements FastifyBaseLogger {
  #child: FastifyBaseLogger | undefined

  constructor(
    private readonly parent: FastifyBaseLogger,
    private readonly bindings: Bindings,
    private readonly options: ChildLoggerOptions,
  ) {}

  /** The child with the request's bindings, made on first use. */
  #logger(): FastifyBaseLogger {
    this.#child ??= this.parent.child(this.bindings, this.options)
    return this.#child
  }

  /** The level the request's lines are written at (the child's, once made). */
  get level(): string {
    return this.#child?.level ?? this.options.level ?? this.parent.level
  }

  set level(level: string) {
    this.#logger().level = level
  }

  // the levels' methods: each calls the same method of the child, made by the first of them (`static` below)
  declare fatal: LogFn
  declare error: LogFn
  declare warn: LogFn
  declare info: LogFn
  declare debug: LogFn
  declare trace: LogFn
  declare silent: LogFn

  static {
    for (const level of ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const) {
      Object.defineProperty(RequestLogger.prototype, level, {
        value(this: RequestLogger, ...args: unknown[]) {
          ;(this.#logger()[level] as (...a: unknown[]) => void)(...args)
        },
      })
    }
  }

  child(bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    return this.#logger().child(bindings, options)
  }

  /**
   * The logger for a line that carries the request's bindings among its own fields: the parent when the
   * request's logger adds nothing but its bindings (no level or serializers of its route), else a child
   * with those options and no bindings.
   */
  unbound(): FastifyBaseLogger {
    return Object.keys(this.options).length === 0 ? this.parent : this.parent.child({}, this.options)
  }
}
