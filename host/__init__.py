"""The composition root: builds the kernel and the parts above it, and wires them.

Sidekick (chat and tasks), the web app's pages, the gallery client and the starter
catalogue live above the kernel; the kernel defines what it needs from them in
kernel/ports.py and this package is the one place that knows both sides. `dreamer up`
(cli/commands/kernel.py) and `python -m dreamer.host.server` start a kernel through it.
"""
