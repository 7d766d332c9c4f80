#!/usr/bin/env python3
"""An HTTP forward proxy for the tests, standing where a site's egress proxy (squid, tinyproxy) would: it opens
`CONNECT host:port` tunnels, which is how netpulsed goes through a proxy (plain http receivers too).

    forward_proxy.py --port-file PATH --log PATH

Listens on 127.0.0.1 (a free port, written to --port-file once it listens) and appends each request line it gets to
--log, one line each ("CONNECT localhost:8080 HTTP/1.1"). A CONNECT is answered "200 Connection established" once
the target is connected (502 when it cannot be), and bytes are then copied both ways until either side closes. Any
other method is answered 405: the daemon must never send a receiver's request to the proxy in clear.
"""

import argparse
import asyncio
import os
import sys


async def pipe(reader, writer):
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    except (ConnectionError, OSError):
        pass
    finally:
        writer.close()


async def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port-file", required=True)
    parser.add_argument("--log", required=True)
    arguments = parser.parse_args()

    async def handle(client_reader, client_writer):
        request = await client_reader.readline()
        while (await client_reader.readline()) not in (b"\r\n", b"\n", b""):
            pass  # the request's headers
        line = request.decode("latin-1").strip()
        with open(arguments.log, "a", encoding="utf-8") as log:
            log.write(line + "\n")
        method, _, rest = line.partition(" ")
        if method != "CONNECT":
            client_writer.write(b"HTTP/1.1 405 Method Not Allowed\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
            await client_writer.drain()
            client_writer.close()
            return
        host, _, port = rest.partition(" ")[0].rpartition(":")
        try:
            target_reader, target_writer = await asyncio.open_connection(host.strip("[]"), int(port))
        except (OSError, ValueError):
            client_writer.write(b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
            await client_writer.drain()
            client_writer.close()
            return
        client_writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
        await client_writer.drain()
        await asyncio.gather(pipe(client_reader, target_writer), pipe(target_reader, client_writer))

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    temporary = arguments.port_file + ".tmp"
    with open(temporary, "w") as port_file:
        port_file.write(str(server.sockets[0].getsockname()[1]))
    os.rename(temporary, arguments.port_file)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        pass
    sys.exit(0)
