import com.amazonaws.services.dynamodbv2.local.main.ServerRunner;
import com.amazonaws.services.dynamodbv2.local.server.DynamoDBProxyServer;
import java.lang.reflect.Field;
import org.eclipse.jetty.server.Connector;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;

/**
 * DynamoDB Local bound to 127.0.0.1 only. The stock ServerRunner listens on every interface and
 * has no host option, so this takes the server it builds from the usual command line
 * (-inMemory -port N ...), binds each Jetty connector to loopback before starting it, then runs it.
 * The Jetty server is a private field of DynamoDBProxyServer, hence the reflection; if a later
 * DynamoDB Local renames it, this fails loudly rather than listening on all interfaces.
 */
public final class LoopbackDynamoDBLocal {
  private static final String HOST = "127.0.0.1";

  public static void main(String[] args) throws Exception {
    DynamoDBProxyServer proxy = ServerRunner.createServerFromCommandLineArgs(args);
    if (proxy == null) return; // -help or a bad argument: ServerRunner has already printed why
    Field field = DynamoDBProxyServer.class.getDeclaredField("server");
    field.setAccessible(true);
    Server jetty = (Server) field.get(proxy);
    int bound = 0;
    for (Connector connector : jetty.getConnectors()) {
      if (!(connector instanceof ServerConnector)) {
        throw new IllegalStateException("unexpected connector " + connector.getClass().getName());
      }
      ((ServerConnector) connector).setHost(HOST);
      bound++;
    }
    if (bound == 0) throw new IllegalStateException("DynamoDB Local has no connector to bind to " + HOST);
    proxy.start();
    proxy.join();
  }
}
