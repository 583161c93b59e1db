/** A consumer of the library on the module path. */
module com.example.app {
    requires dev.threadpool;
}
