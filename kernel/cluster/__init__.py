"""Several kernels serving one installation on one PostgreSQL database (decision 0045).

`nodes` keeps the node table (heartbeats, health, who they serve); `bus` carries what
every node must apply to its in-memory state over LISTEN/NOTIFY; `leader` elects the one
node that runs the cron scheduler and takes over a dead node's work; `runtime` ties them
to a kernel. A single-node kernel (SQLite or PostgreSQL without a node name) builds none
of this and runs exactly as before.
"""
