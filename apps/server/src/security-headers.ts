/**
 * What the browser is told of every answer of the plugin's routes: scripts and styles of the
 * server's own (the inspector's, the docs page's), no framing (the inspector approves, rejects and
 * cancels: no page of another site may put it under a click), no sniffing, no referrer.
 */
export const SECURITY_HEADERS = {
  contentSecurityPolicy: {
    useDefaults: false,
    directives: {
      defaultSrc: ["'self'"],
      // The inspector's Run forms check arguments in the page with ajv, which compiles each tool's
      // schema (the server's own) into a function: no inline script, and no script of another origin.
      scriptSrc: ["'self'", "'unsafe-eval'"],
      // The docs page (Swagger UI) and the inspector's drawing set styles inline.
      styleSrc: ["'self'", "'unsafe-inline'"],
      imgSrc: ["'self'", 'data:'],
      connectSrc: ["'self'"],
      frameAncestors: ["'none'"],
      baseUri: ["'none'"],
      formAction: ["'self'"],
      objectSrc: ["'none'"],
    },
  },
  referrerPolicy: { policy: 'no-referrer' as const },
  // Served over plain HTTP on loopback by default: TLS is the proxy's, and so is HSTS.
  strictTransportSecurity: false,
};
