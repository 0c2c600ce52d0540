# A batch job: runs once, prints a line and exits 0.
#   troupe job run examples/batch.hcl
job "batch" {
  datacenters = ["dc1"]
  type        = "batch"

  group "once" {
    count = 1

    task "echo" {
      driver = "exec"

      config {
        command = "/bin/sh"
        args    = ["-c", "echo \"batch job ran on $(hostname)\"; exit 0"]
      }

      resources {
        cpu    = 100
        memory = 32
      }
    }
  }
}
