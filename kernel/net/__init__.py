"""Network egress for agents: the `net.fetch` syscall behind `ctx.fetch`.

Sandboxes have no network; an agent reaches the outside only by asking the kernel.
`policy` decides what a URL means and which addresses a grant may reach,
`transport` makes one exchange over a connection pinned to checked addresses,
`fetch` is the syscall handler that ties them to grants, redirects and the audit log.
"""
