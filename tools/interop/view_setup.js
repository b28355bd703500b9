// make check-interop: the renderer and camera spark.html and gltf.html share, from the page's
// query: w, h, fovy (degrees), bg (0 black, 1 white), m (the camera-to-world matrix, 16 numbers
// column by column, in three.js's camera axes: x right, y up, looking down -z).
import * as THREE from "three";
export function viewSetup(q) {
  const w = +q.get("w"), h = +q.get("h");
  const renderer = new THREE.WebGLRenderer({ antialias: false, preserveDrawingBuffer: true });
  renderer.setPixelRatio(1);
  renderer.setSize(w, h);
  renderer.setClearColor(+q.get("bg") ? 0xffffff : 0x000000, 1);
  document.body.appendChild(renderer.domElement);
  const camera = new THREE.PerspectiveCamera(+q.get("fovy"), w / h, 0.01, 1000);
  camera.matrixAutoUpdate = false;
  camera.matrix.fromArray(q.get("m").split(",").map(Number));
  camera.matrix.decompose(camera.position, camera.quaternion, camera.scale);
  camera.updateMatrixWorld(true);
  return { renderer, camera };
}
