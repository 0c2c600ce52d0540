# A service that writes to the CSI volume vol1 (examples/csi/volume.hcl),
# mounted before the task starts (exec tasks see it at $NOMAD_TASK_DIR/data).
#   bin/troupe job run examples/csi/app.hcl
#   bin/troupe volume status vol1    # one write claim, this job's allocation
job "csi-app" {
  datacenters = ["dc1"]
  type        = "service"

  group "app" {
    count = 1

    volume "data" {
      type            = "csi"
      source          = "vol1"
      access_mode     = "single-node-writer"
      attachment_mode = "file-system"
    }

    task "writer" {
      driver = "exec"

      config {
        command = "/bin/sh"
        args    = ["-c", "i=0; while true; do i=$((i+1)); echo \"write $i from $NOMAD_ALLOC_ID\" >> $NOMAD_TASK_DIR/data/log.txt; sleep 5; done"]
      }

      volume_mount {
        volume      = "data"
        destination = "/data"
      }

      resources {
        cpu    = 100
        memory = 64
      }
    }
  }
}
