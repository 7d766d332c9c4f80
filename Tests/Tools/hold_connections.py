#!/usr/bin/env python3
"""Holds silent TCP connections: one from each SOURCE address to HOST PORT, never sending a byte (a client that
never starts TLS). Prints "held N closed M" whenever the count of connections the peer has closed changes, and runs
until it is killed.

    hold_connections.py HOST PORT SOURCE...
"""
import select
import socket
import sys


def main():
    host, port, sources = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    connections = []
    for source in sources:
        connection = socket.socket(family, socket.SOCK_STREAM)
        connection.bind((source, 0))
        connection.connect((host, port))
        connections.append(connection)
    closed = set()
    reported = None
    while True:
        open_ones = [c for c in connections if c not in closed]
        readable, _, _ = select.select(open_ones, [], [], 0.1)
        for connection in readable:
            try:
                data = connection.recv(1)
            except OSError:
                data = b""
            if not data:
                closed.add(connection)
        state = (len(connections) - len(closed), len(closed))
        if state != reported:
            print(f"held {state[0]} closed {state[1]}", flush=True)
            reported = state


if __name__ == "__main__":
    main()
