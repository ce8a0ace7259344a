"""Host control in one place: what the machine is (``facts``), the limits a scenario
puts on the server (``profile``: cgroups v1 and v2, standard library only so lab
hosts run it too), the vm.* settings and swap a run changes and puts back
(``tuning``), and CPU wake-up noise (``noise``: the probe and the keep-awake)."""
