// Preloaded into the Node.js peers of bench/proxy.py (node --require bench/loopback_only.cjs):
// a TCP listener given a port and no host listens on 127.0.0.1 only. supergateway has no option
// for the address it listens on and would otherwise listen on every interface.
'use strict';
const net = require('node:net');

const LOOPBACK = '127.0.0.1';
const listen = net.Server.prototype.listen;

net.Server.prototype.listen = function (...args) {
  const first = args[0];
  if (typeof first === 'number' || (typeof first === 'string' && /^\d+$/.test(first))) {
    // listen(port[, host][, backlog][, callback]): no host given, so loopback.
    if (typeof args[1] !== 'string') args.splice(1, 0, LOOPBACK);
  } else if (first && typeof first === 'object' && first.path === undefined && first.port !== undefined) {
    if (!first.host || first.host === '0.0.0.0' || first.host === '::') args[0] = { ...first, host: LOOPBACK };
  }
  return listen.apply(this, args);
};
