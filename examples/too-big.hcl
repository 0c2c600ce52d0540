# A valid job that no node can hold: 10,000,000 MB (about 10 TB) of memory.
# `troupe job run` accepts it, and its evaluation reports a placement
# failure: no node has enough memory.
job "too-big" {
  datacenters = ["dc1"]
  type        = "service"

  group "huge" {
    count = 1

    task "huge" {
      driver = "exec"

      config {
        command = "/bin/sleep"
        args    = ["3600"]
      }

      resources {
        cpu    = 100
        memory = 10000000
      }
    }
  }
}
