"""Install plans on a switch through BFRuntime, or on the emulated switch by default."""
