#!/usr/bin/env python3
"""A TCP proxy that holds every byte for a fixed time in each direction, for tests: this kernel has no netem, so a
slow link's delay comes from here (its rate from tc tbf, its loss from nftables).

    delay_proxy.py LISTEN_HOST LISTEN_PORT TARGET_HOST TARGET_PORT DELAY_SECONDS

Bytes keep their order; a connection closed on one side is closed on the other once the delayed bytes are out.
"""

import asyncio
import sys


async def pipe(reader, writer, delay):
    loop = asyncio.get_running_loop()
    queue = asyncio.Queue()

    async def forward():
        while True:
            due, data = await queue.get()
            wait = due - loop.time()
            if wait > 0:
                await asyncio.sleep(wait)
            if not data:
                writer.close()
                return
            writer.write(data)
            await writer.drain()

    sender = asyncio.create_task(forward())
    try:
        while True:
            data = await reader.read(65536)
            queue.put_nowait((loop.time() + delay, data))
            if not data:
                break
    except (ConnectionError, OSError):
        queue.put_nowait((loop.time(), b""))
    await sender


async def main(listen_host, listen_port, target_host, target_port, delay):
    async def handle(client_reader, client_writer):
        try:
            server_reader, server_writer = await asyncio.open_connection(target_host, target_port)
        except OSError:
            client_writer.close()
            return
        await asyncio.gather(
            pipe(client_reader, server_writer, delay), pipe(server_reader, client_writer, delay),
            return_exceptions=True)

    server = await asyncio.start_server(handle, listen_host, listen_port)
    print(f"listening on {listen_host}:{listen_port}", flush=True)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    host, port, target, target_port, delay = sys.argv[1:6]
    asyncio.run(main(host, int(port), target, int(target_port), float(delay)))
